import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { loadDevIssuer } from './dev-issuer.js';

describe('development issuer (sandbox without an identity provider)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('keeps one key, whoever loads it and however many at once', async () => {
    const db = t.database.handle.db;
    const issuers = await Promise.all([loadDevIssuer(db, t), loadDevIssuer(db, t)]);
    const kids = issuers.map((issuer) => issuer.jwks().keys[0]?.kid);
    expect(new Set(kids).size).toBe(1);
    const served = (await t.app.inject({ url: '/.well-known/haven/dev-jwks.json' })).json();
    expect(served.keys.map((k: { kid: string }) => k.kid)).toEqual(kids.slice(0, 1));
  });

  it('publishes only the public key, cacheable', async () => {
    const res = await t.app.inject({ url: '/.well-known/haven/dev-jwks.json' });
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const [jwk] = res.json().keys;
    expect(jwk).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) {
      expect(jwk[secret]).toBeUndefined();
    }
  });

  it('mints a token for a new user on each call, verified like any session', async () => {
    const mint = async () =>
      (await t.app.inject({ method: 'POST', url: '/api/v1/sandbox/session-token' })).json();
    const [a, b] = [await mint(), await mint()];
    expect(a).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(a.subject).not.toBe(b.subject);
    const me = async (token: string) =>
      (
        await t.app.inject({
          url: '/api/v1/auth/me',
          headers: { authorization: `Bearer ${token}` },
        })
      ).json().id;
    expect(await me(a.access_token)).not.toBe(await me(b.access_token));
    const named = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sandbox/session-token',
      payload: { email: 'dev@example.com', name: 'Dev' },
    });
    const profile = await t.app.inject({
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${named.json().access_token}` },
    });
    expect(profile.json()).toMatchObject({ email: 'dev@example.com', name: 'Dev' });
  });
});
