import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, mintKey, newSession, type Session } from '../../../test/identity.js';
import { productionEnv } from '../../../test/production.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';

describe('families: who sees what', () => {
  let t: TestApp;
  let alice: Session;
  let bob: Session;
  beforeAll(async () => {
    t = await buildTestApp();
    alice = await newSession(t.app);
    bob = await newSession(t.app);
  });
  afterAll(async () => t.close());

  const create = (headers: Record<string, string>, name: string, prefix = '/api/v1') =>
    t.app.inject({ method: 'POST', url: `${prefix}/families`, headers, payload: { name } });
  /** The caller's own families (the sandbox demo family, visible to all, is left out). */
  const list = async (headers: Record<string, string>, prefix = '/api/v1') =>
    (
      (await t.app.inject({ url: `${prefix}/families`, headers })).json() as Array<{
        id: string;
        name: string;
      }>
    ).filter((family) => family.id !== DEMO_FAMILY_ID);

  it('gives a session user its own families only', async () => {
    expect((await create(alice.auth, 'Alice Family')).statusCode).toBe(201);
    expect((await create(bob.auth, 'Bob Family')).statusCode).toBe(201);
    expect((await list(alice.auth)).map((f) => f.name)).toEqual(['Alice Family']);
    expect((await list(bob.auth)).map((f) => f.name)).toEqual(['Bob Family']);
  });

  it('shares an org’s families among all its keys, and keeps test and live apart', async () => {
    const org = await createOrg(t.app, alice);
    const one = await mintKey(t.app, alice, org.id);
    const two = await mintKey(t.app, alice, org.id);
    expect((await create(bearer(one.key), 'Keyed Family', '/api/v1/developer')).statusCode).toBe(
      201,
    );
    expect((await list(bearer(two.key), '/api/v1/developer')).map((f) => f.name)).toEqual([
      'Keyed Family',
    ]);
    // The same handler under /api/v1 with a key: same shapes, same data.
    expect((await list(bearer(two.key))).map((f) => f.name)).toEqual(['Keyed Family']);
    // Key-made families are the org's, not the user's.
    expect((await list(alice.auth)).map((f) => f.name)).toEqual(['Alice Family']);
  });

  it('keys sandbox callers without a credential by X-Sandbox-Session', async () => {
    const session = (name: string) => ({ 'x-sandbox-session': name });
    expect((await create(session('s-1'), 'Sandbox One')).statusCode).toBe(201);
    expect((await list(session('s-1'))).map((f) => f.name)).toEqual(['Sandbox One']);
    expect(await list(session('s-unused'))).toEqual([]);
    const bad = await t.app.inject({ url: '/api/v1/families', headers: session('has space') });
    expect(bad.statusCode).toBe(400);
  });

  it('answers a present but invalid credential with 401, never the sandbox fallback', async () => {
    for (const headers of [
      bearer('not-a-jwt'),
      bearer(`svc_test_${'x'.repeat(40)}`),
      { authorization: 'Token abc' },
    ]) {
      const res = await t.app.inject({ url: '/api/v1/families', headers });
      expect(res.statusCode).toBe(401);
    }
  });
});

describe('families in production', () => {
  it('needs a credential: 401 missing authorization header', async () => {
    const t = await buildTestApp({
      env: productionEnv(),
    });
    try {
      const res = await t.app.inject({ url: '/api/v1/families' });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        error: 'Unauthorized',
        message: 'missing authorization header',
        code: 401,
      });
    } finally {
      await t.close();
    }
  });
});
