import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, testConfig } from '../../test/app.js';
import { TestClock } from '../../test/clock.js';
import { createTestDatabase } from '../../test/database.js';
import type { Db } from '../db/connect.js';
import { UnauthorizedError } from '../http/errors.js';
import { DEV_ISSUER, loadDevIssuer } from './dev-issuer.js';
import { createSessionAuthority } from './session-authority.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

async function expectRejected(promise: Promise<unknown>) {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UnauthorizedError);
  expect((error as Error).message).toBe('invalid or expired token');
}

async function keyRows(db: Db): Promise<number> {
  return (await db.selectFrom('dev_issuer_keys').select('kid').execute()).length;
}

describe('development issuer key', () => {
  const clock = new TestClock();

  it('is made once per database, even when several processes load it at once', async () => {
    const fresh = await createTestDatabase(); // migrated, no key yet
    // On PostgreSQL a second pool stands in for a second process; PGlite has one owner.
    const other = fresh.reopen?.();
    try {
      expect(await keyRows(fresh.handle.db)).toBe(0);
      const dbs = [fresh.handle.db, other?.db ?? fresh.handle.db, fresh.handle.db];
      const issuers = await Promise.all(dbs.map((db) => loadDevIssuer(db, { clock })));
      const kids = issuers.map((issuer) => issuer.jwks().keys[0]?.kid);
      expect(kids[0]).toMatch(/^[A-Za-z0-9_-]{43}$/); // base64url SHA-256 thumbprint
      expect(new Set(kids).size).toBe(1);
      expect(await keyRows(fresh.handle.db)).toBe(1);

      const again = await loadDevIssuer(fresh.handle.db, { clock });
      expect(again.jwks()).toEqual(issuers[0]?.jwks());
    } finally {
      await other?.close();
      await fresh.drop();
    }
  });

  it('publishes only public members', async () => {
    const database = await createTestDatabase();
    try {
      const issuer = await loadDevIssuer(database.handle.db, { clock });
      const { keys } = issuer.jwks();
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
      for (const member of PRIVATE_MEMBERS) {
        expect(keys[0]).not.toHaveProperty(member);
      }
      // 2048-bit modulus: 256 bytes.
      expect(Buffer.from(keys[0]?.n ?? '', 'base64url')).toHaveLength(256);
    } finally {
      await database.drop();
    }
  });
});

describe('development issuer tokens, through the session authority', () => {
  const clock = new TestClock();
  const config = testConfig();
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database.drop());

  it('mints RS256 tokens for a new user each time, verified on the common path', async () => {
    const authority = await createSessionAuthority(config, database.handle.db, clock);
    const issuer = authority.devIssuer;
    expect(issuer?.issuer).toBe(DEV_ISSUER);
    if (!issuer) {
      return;
    }
    const first = await issuer.mint();
    const second = await issuer.mint();
    expect(first.subject).toMatch(UUID);
    expect(second.subject).toMatch(UUID);
    expect(first.subject).not.toBe(second.subject);

    expect(decodeProtectedHeader(first.token)).toEqual({
      alg: 'RS256',
      kid: issuer.jwks().keys[0]?.kid,
      typ: 'JWT',
    });
    const nowSeconds = clock.now().getTime() / 1000;
    expect(decodeJwt(first.token)).toEqual({
      iss: DEV_ISSUER,
      sub: first.subject,
      iat: nowSeconds,
      nbf: nowSeconds,
      exp: nowSeconds + 3600,
      email: `${first.subject.slice(0, 8)}@sandbox.haven.test`,
      name: 'Sandbox Developer',
    });
    expect(first.expiresAt).toEqual(new Date(clock.now().getTime() + 3_600_000));

    expect(await authority.verifier.verify(first.token)).toEqual({
      issuer: DEV_ISSUER,
      subject: first.subject,
      email: `${first.subject.slice(0, 8)}@sandbox.haven.test`,
      name: 'Sandbox Developer',
    });
    const named = await issuer.mint({ email: 'dev@example.com', name: 'Dev', subject: 'fixed' });
    expect(await authority.verifier.verify(named.token)).toMatchObject({
      subject: 'fixed',
      email: 'dev@example.com',
      name: 'Dev',
    });
  });

  it('expires tokens 3600 s after minting, with the 30 s leeway', async () => {
    const ticking = new TestClock();
    const authority = await createSessionAuthority(config, database.handle.db, ticking);
    const { token } = await (authority.devIssuer ?? noIssuer()).mint();
    ticking.advance(3_629_000);
    await expect(authority.verifier.verify(token)).resolves.toBeDefined();
    ticking.advance(2_000);
    await expectRejected(authority.verifier.verify(token));
  });

  it("refuses another deployment's development tokens (each database has its own key)", async () => {
    const elsewhere = await createTestDatabase();
    try {
      const foreign = await loadDevIssuer(elsewhere.handle.db, { clock });
      const authority = await createSessionAuthority(config, database.handle.db, clock);
      await expectRejected(authority.verifier.verify((await foreign.mint()).token));
    } finally {
      await elsewhere.drop();
    }
  });

  it('is never used outside the sandbox', async () => {
    const production = { ...config, appEnv: 'production' as const, authJwksUrl: undefined };
    await expect(createSessionAuthority(production, database.handle.db, clock)).rejects.toThrow(
      /AUTH_JWKS_URL/,
    );
  });
});

function noIssuer(): never {
  throw new Error('the sandbox authority has no development issuer');
}

describe('development issuer routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const mint = (payload?: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/sandbox/session-token',
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const me = (token: string) =>
    t.app.inject({ url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } });

  it('serves the key the deployment signs with, public and cacheable', async () => {
    const res = await t.app.inject({ url: '/.well-known/haven/dev-jwks.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const issuer = await loadDevIssuer(t.database.handle.db, t);
    expect(res.json()).toEqual(issuer.jwks());
    const [jwk] = res.json().keys;
    for (const member of PRIVATE_MEMBERS) {
      expect(jwk).not.toHaveProperty(member);
    }
  });

  it('answers POST with 201 and a token for a new user each call', async () => {
    const a = await mint();
    const b = await mint(undefined, { 'content-type': 'application/json' });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(Object.keys(a.json()).sort()).toEqual([
      'access_token',
      'expires_in',
      'subject',
      'token_type',
    ]);
    expect(a.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(a.json().subject).toMatch(UUID);
    expect(a.json().subject).not.toBe(b.json().subject);
    expect(decodeJwt(a.json().access_token).sub).toBe(a.json().subject);

    const [meA, meB] = [await me(a.json().access_token), await me(b.json().access_token)];
    expect(meA.statusCode).toBe(200);
    expect(meB.statusCode).toBe(200);
    expect(meA.json().id).not.toBe(meB.json().id);
  });

  it('takes optional email and name, within 255 characters', async () => {
    const named = await mint({ email: 'dev@example.com', name: 'Dev' });
    expect(named.statusCode).toBe(201);
    const profile = await me(named.json().access_token);
    expect(profile.json()).toMatchObject({ email: 'dev@example.com', name: 'Dev' });

    expect((await mint({})).statusCode).toBe(201);
    const long = await mint({ name: 'x'.repeat(256) });
    expect(long.statusCode).toBe(400);
    expect(long.json()).toMatchObject({ error: 'Bad Request', code: 400 });
    expect((await mint({ email: 7 })).statusCode).toBe(400);
  });

  it('never writes a minted token into the logs', async () => {
    const { access_token: token } = (await mint()).json();
    await me(token);
    expect(t.rawLogs.some((line) => line.includes(token))).toBe(false);
  });
});

describe('with an identity provider configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      env: { AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json', AUTH_ISSUER: 'https://id.test/' },
    });
  });
  afterAll(async () => t.close());

  it('has no development issuer: its routes are 404 and its tokens are refused', async () => {
    const jwks = await t.app.inject({ url: '/.well-known/haven/dev-jwks.json' });
    expect(jwks.statusCode).toBe(404);
    const minted = await t.app.inject({ method: 'POST', url: '/api/v1/sandbox/session-token' });
    expect(minted.statusCode).toBe(404);
    expect(minted.json()).toMatchObject({ message: 'route not found', code: 404 });

    const stray = await loadDevIssuer(t.database.handle.db, t);
    const res = await t.app.inject({
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${(await stray.mint()).token}` },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('invalid or expired token');
  });
});
