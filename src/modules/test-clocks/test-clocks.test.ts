// CONTRACT.md §11.3: test clocks belong to their maker (404 to anyone else), move only
// forward and at most 2 years at a time, refuse a second advance while one runs, and exist
// only in the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, longSession, mintKey, type Session } from '../../../test/identity.js';
import { productionEnv } from '../../../test/production.js';

type Headers = Record<string, string>;

describe('test clocks', () => {
  let t: TestApp;
  let owner: Session;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await longSession(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    headers: Headers,
    payload?: object,
  ) => t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

  async function makeClock(headers: Headers, frozenTime = '2026-01-01T00:00:00Z') {
    const res = await send('POST', '/sandbox/test-clocks', headers, { frozen_time: frozenTime });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; frozen_time: string; status: string; name: string | null };
  }

  it('is created, read and deleted by its owner; another caller sees 404', async () => {
    const clock = await makeClock(owner.auth, '2026-02-03T04:05:06Z');
    expect(clock).toMatchObject({
      frozen_time: '2026-02-03T04:05:06.000Z',
      status: 'ready',
      name: null,
    });
    expect((await send('GET', `/sandbox/test-clocks/${clock.id}`, owner.auth)).json()).toEqual(
      clock,
    );

    const sessionA = { 'x-sandbox-session': 'clocks-a' };
    const sessionB = { 'x-sandbox-session': 'clocks-b' };
    const anonymous = await makeClock(sessionA);
    expect((await send('GET', `/sandbox/test-clocks/${anonymous.id}`, sessionA)).statusCode).toBe(
      200,
    );
    for (const [who, id] of [
      [sessionB, anonymous.id],
      [owner.auth, anonymous.id],
      [sessionA, clock.id],
    ] as const) {
      const read = await send('GET', `/sandbox/test-clocks/${id}`, who);
      expect(read.statusCode).toBe(404);
      expect(read.json()).toMatchObject({ message: 'test clock not found' });
      expect(
        (
          await send('POST', `/sandbox/test-clocks/${id}/advance`, who, {
            frozen_time: '2026-06-01T00:00:00Z',
          })
        ).statusCode,
      ).toBe(404);
      expect((await send('DELETE', `/sandbox/test-clocks/${id}`, who)).statusCode).toBe(404);
    }
    // Nor may another caller attach a family to it.
    const family = await send('POST', '/families', sessionB, {
      name: 'Not theirs',
      test_clock_id: anonymous.id,
    });
    expect(family.statusCode).toBe(404);
    expect(family.json()).toMatchObject({ message: 'test clock not found' });

    // A key's clocks are its org's environment's.
    const org = await createOrg(t.app, owner);
    const key = await mintKey(t.app, owner, org.id);
    const keyClock = await makeClock(bearer(key.key));
    expect((await send('GET', `/sandbox/test-clocks/${keyClock.id}`, owner.auth)).statusCode).toBe(
      404,
    );

    expect((await send('DELETE', `/sandbox/test-clocks/${clock.id}`, owner.auth)).statusCode).toBe(
      204,
    );
    expect((await send('GET', `/sandbox/test-clocks/${clock.id}`, owner.auth)).statusCode).toBe(
      404,
    );
  });

  it('advances only forward, at most 2 years per call', async () => {
    const clock = await makeClock(owner.auth, '2026-01-01T00:00:00Z');
    const advance = (frozenTime: string) =>
      send('POST', `/sandbox/test-clocks/${clock.id}/advance`, owner.auth, {
        frozen_time: frozenTime,
      });
    const backwards = await advance('2025-12-31T23:59:59Z');
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().message).toBe(
      "frozen_time must be later than the clock's current frozen_time",
    );
    expect((await advance('2026-01-01T00:00:00Z')).statusCode).toBe(400);
    const tooFar = await advance('2028-01-01T00:00:01Z');
    expect(tooFar.statusCode).toBe(400);
    expect(tooFar.json().message).toBe(
      "frozen_time may be at most 2 years after the clock's current frozen_time",
    );
    expect((await advance('not a time')).statusCode).toBe(400);
    const ok = await advance('2028-01-01T00:00:00Z');
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ frozen_time: '2028-01-01T00:00:00.000Z' });
  });

  it('a deleted clock returns its families to the real clock', async () => {
    const clock = await makeClock(owner.auth, '2040-01-01T00:00:00Z');
    const family = await send('POST', '/families', owner.auth, {
      name: 'Future',
      test_clock_id: clock.id,
    });
    expect(family.statusCode, family.body).toBe(201);
    expect(family.json()).toMatchObject({
      test_clock_id: clock.id,
      created_at: '2040-01-01T00:00:00.000Z',
    });
    const child = await send('POST', `/families/${family.json().id}/children`, owner.auth, {
      name: 'Zed',
      birth_date: '2030-01-01',
    });
    expect(child.statusCode, child.body).toBe(201);
    // The birth date is checked against the family's clock: 2030 is in its past.
    expect(child.json()).toMatchObject({ age: 10, created_at: '2040-01-01T00:00:00.000Z' });

    expect((await send('DELETE', `/sandbox/test-clocks/${clock.id}`, owner.auth)).statusCode).toBe(
      204,
    );
    const after = await send('GET', `/families/${family.json().id}`, owner.auth);
    expect(after.json().test_clock_id).toBeNull();
    // Back on the real clock (the app's, 2026-01-15): the child is not born yet.
    const real = await send('GET', `/children/${child.json().id}`, owner.auth);
    expect(real.json().age).toBeLessThan(0);
  });
});

describe('refusing a second advance while one runs', () => {
  it('answers 409 until the run is done (no worker runs it here)', async () => {
    const t = await buildTestApp({ env: { WORKERS: 'off' } });
    try {
      const owner = await longSession(t);
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/sandbox/test-clocks',
        headers: owner.auth,
        payload: { frozen_time: '2026-01-01T00:00:00Z' },
      });
      const id = created.json().id;
      const advance = (frozenTime: string) =>
        t.app.inject({
          method: 'POST',
          url: `/api/v1/sandbox/test-clocks/${id}/advance`,
          headers: owner.auth,
          payload: { frozen_time: frozenTime },
        });
      const first = await advance('2026-06-01T00:00:00Z');
      expect(first.json()).toMatchObject({ status: 'advancing' });
      const second = await advance('2026-07-01T00:00:00Z');
      expect(second.statusCode).toBe(409);
      expect(second.json().message).toBe(
        'the test clock is still advancing: wait until its status is ready',
      );
    } finally {
      await t.close();
    }
  });
});

describe('test clocks in production', () => {
  it('every path is 404, and no family can join one', async () => {
    const t = await buildTestApp({ env: productionEnv() });
    try {
      const id = '00000000-0000-4000-8000-000000000000';
      for (const [method, url, payload] of [
        ['POST', '/api/v1/sandbox/test-clocks', { frozen_time: '2026-01-01T00:00:00Z' }],
        ['GET', `/api/v1/sandbox/test-clocks/${id}`, undefined],
        [
          'POST',
          `/api/v1/sandbox/test-clocks/${id}/advance`,
          { frozen_time: '2026-01-02T00:00:00Z' },
        ],
        ['DELETE', `/api/v1/sandbox/test-clocks/${id}`, undefined],
      ] as const) {
        const res = await t.app.inject({ method, url, ...(payload ? { payload } : {}) });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
      }
      const openapi = await t.app.inject({ url: '/openapi.json' });
      expect(openapi.body).not.toContain('/sandbox/test-clocks');
    } finally {
      await t.close();
    }
  });
});
