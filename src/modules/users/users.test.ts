import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, newSession } from '../../../test/identity.js';
import {
  JwksServer,
  newSigningKey,
  type SigningKey,
  signSession,
} from '../../../test/jwks-server.js';
import { productionEnv } from '../../../test/production.js';

describe('/auth/me and /auth/logout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('maps one (iss, sub) to one stable internal user', async () => {
    const session = await newSession(t.app);
    const me = await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth });
    expect(me.json()).toEqual({
      id: session.userId,
      email: expect.stringContaining('@'),
      name: expect.any(String),
      created_at: t.clock.now().toISOString(),
    });
    const again = await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth });
    expect(again.json().id).toBe(session.userId);
    const other = await newSession(t.app);
    expect(other.userId).not.toBe(session.userId);
  });

  it('logout is a no-op 204 that still needs a session', async () => {
    const session = await newSession(t.app);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: session.auth,
    });
    expect(res.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth })).statusCode).toBe(
      200,
    );
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(
      401,
    );
  });

  it('rejects an expired session token', async () => {
    const session = await newSession(t.app);
    t.clock.advance(3600_000 + 31_000);
    const res = await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth });
    expect(res.json()).toEqual({
      error: 'Unauthorized',
      message: 'invalid or expired token',
      code: 401,
    });
  });
});

describe('sessions from an identity provider (production)', () => {
  const jwks = new JwksServer();
  let t: TestApp;
  let key: SigningKey;
  const ISS = 'https://id.example.test/';
  beforeAll(async () => {
    await jwks.start();
    key = await newSigningKey('prod-1');
    jwks.keys.push(key.jwk);
    t = await buildTestApp({
      env: { ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }), AUTH_AUDIENCE: 'haven' },
    });
  });
  afterAll(async () => {
    await t.close();
    await jwks.stop();
  });

  const token = (sub: string, extra: Record<string, string> = {}) => {
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    return signSession(key, { iss: ISS, sub, aud: 'haven', iat, exp: iat + 600, ...extra });
  };

  it('creates the user on first sight and keeps its id for the same (iss, sub)', async () => {
    const first = await t.app.inject({
      url: '/api/v1/auth/me',
      headers: bearer(await token('auth0|42', { email: 'pat@example.com' })),
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ email: 'pat@example.com', name: '' });
    const second = await t.app.inject({
      url: '/api/v1/auth/me',
      headers: bearer(await token('auth0|42')),
    });
    expect(second.json().id).toBe(first.json().id);
  });

  it('serves no development issuer and takes live keys', async () => {
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/v1/sandbox/session-token' })).statusCode,
    ).toBe(404);
    const auth = bearer(await token('auth0|owner'));
    const org = await t.app.inject({
      method: 'POST',
      url: '/api/v1/developers/orgs',
      headers: auth,
      payload: { name: 'Prod' },
    });
    const orgId = org.json().id;
    for (const environment of ['live', 'test']) {
      const minted = await t.app.inject({
        method: 'POST',
        url: `/api/v1/developers/orgs/${orgId}/keys`,
        headers: auth,
        payload: { name: environment, environment },
      });
      const res = await t.app.inject({
        url: '/api/v1/developer/families',
        headers: bearer(minted.json().key),
      });
      expect(res.statusCode).toBe(200);
    }
  });

  it('keeps test and live data apart', async () => {
    const auth = bearer(await token('auth0|partition'));
    const orgId = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/developers/orgs',
        headers: auth,
        payload: { name: 'P' },
      })
    ).json().id;
    const mint = async (environment: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/v1/developers/orgs/${orgId}/keys`,
          headers: auth,
          payload: { name: environment, environment },
        })
      ).json().key as string;
    const live = await mint('live');
    const test = await mint('test');
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/families',
      headers: bearer(live),
      payload: { name: 'Live Family' },
    });
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/families',
      headers: bearer(test),
      payload: { name: 'Test Family' },
    });
    const names = async (secret: string) =>
      (await t.app.inject({ url: '/api/v1/developer/families', headers: bearer(secret) }))
        .json()
        .map((f: { name: string }) => f.name);
    expect(await names(live)).toEqual(['Live Family']);
    expect(await names(test)).toEqual(['Test Family']);
  });
});
