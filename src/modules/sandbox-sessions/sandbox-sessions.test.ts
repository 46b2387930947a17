import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { withTwoInstances } from '../../../test/instances.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';
import { EVICTION_GRACE_MS } from './service.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const session = (name: string) => ({ 'x-sandbox-session': name });

async function createFamily(t: TestApp, name: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/families',
    headers: session(name),
    payload: { name: `${name} family` },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

/** The caller's own families (the demo family, shared by everyone, left out). */
async function ownFamilies(t: TestApp, name: string): Promise<string[]> {
  const res = await t.app.inject({ url: '/api/v1/families', headers: session(name) });
  expect(res.statusCode).toBe(200);
  return res
    .json()
    .filter((family: { id: string }) => family.id !== DEMO_FAMILY_ID)
    .map((family: { name: string }) => family.name);
}

async function sessionNames(t: TestApp): Promise<string[]> {
  const rows = await t.database.handle.db
    .selectFrom('sandbox_sessions')
    .select('name')
    .orderBy('name')
    .execute();
  return rows.map((row) => row.name);
}

describe('sandbox sessions are bounded', () => {
  let t: TestApp;
  afterEach(() => t.close());

  it('evict the least recently seen session, with its data, when the cap is reached', async () => {
    t = await buildTestApp({ env: { SANDBOX_MAX_SESSIONS: '3' } });
    await createFamily(t, 'default');
    await createFamily(t, 'alpha');
    const betaFamily = await createFamily(t, 'beta');
    t.clock.advance(EVICTION_GRACE_MS + MINUTE);
    // `default` and beta are seen again; alpha is the least recently seen.
    expect(await ownFamilies(t, 'default')).toEqual(['default family']);
    expect(await ownFamilies(t, 'beta')).toEqual(['beta family']);

    await createFamily(t, 'gamma');
    expect(await sessionNames(t)).toEqual(['beta', 'default', 'gamma']);
    const alphaFamilies = await t.database.handle.db
      .selectFrom('families')
      .select('id')
      .where('name', '=', 'alpha family')
      .execute();
    expect(alphaFamilies).toEqual([]);
    // The name is free again and starts clean; the others kept their data.
    t.clock.advance(EVICTION_GRACE_MS + MINUTE);
    await t.app.inject({ url: '/api/v1/families', headers: session('beta') });
    await t.app.inject({ url: '/api/v1/families', headers: session('default') });
    expect(await ownFamilies(t, 'alpha')).toEqual([]);
    expect(await sessionNames(t)).toEqual(['alpha', 'beta', 'default']);
    const beta = await t.app.inject({
      url: `/api/v1/families/${betaFamily}`,
      headers: session('beta'),
    });
    expect(beta.statusCode).toBe(200);
  });

  it('refuse a new session with 503 while every session is recent, and keep serving the others', async () => {
    t = await buildTestApp({ env: { SANDBOX_MAX_SESSIONS: '2' } });
    await createFamily(t, 'one');
    await createFamily(t, 'two');
    const refused = await t.app.inject({ url: '/api/v1/families', headers: session('three') });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({
      error: 'Service Unavailable',
      message: 'sandbox session limit reached: reuse an X-Sandbox-Session value or retry later',
    });
    expect(await sessionNames(t)).toEqual(['one', 'two']);
    expect(await ownFamilies(t, 'one')).toEqual(['one family']);
    // The demo family stays readable to the existing sessions.
    const demo = await t.app.inject({
      url: `/api/v1/families/${DEMO_FAMILY_ID}`,
      headers: session('two'),
    });
    expect(demo.statusCode).toBe(200);
  });

  it('delete sessions idle longer than SANDBOX_SESSION_IDLE_DAYS, but never default', async () => {
    t = await buildTestApp({ env: { SANDBOX_SESSION_IDLE_DAYS: '7' } });
    await createFamily(t, 'default');
    await createFamily(t, 'sleepy');
    t.clock.advance(6 * DAY);
    expect(await ownFamilies(t, 'sleepy')).toEqual(['sleepy family']);
    t.clock.advance(7 * DAY + MINUTE);
    // Any new session sweeps the idle ones first.
    await createFamily(t, 'newcomer');
    expect(await sessionNames(t)).toEqual(['default', 'newcomer']);
    expect(await ownFamilies(t, 'default')).toEqual(['default family']);
    expect(await ownFamilies(t, 'sleepy')).toEqual([]);
    // The demo family is never part of a session's data.
    const demo = await t.app.inject({ url: `/api/v1/families/${DEMO_FAMILY_ID}` });
    expect(demo.statusCode).toBe(200);
  });
});

describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)(
  'sandbox session eviction across instances',
  () => {
    it('is heard by the other instance, which stops using the deleted user at once', async () => {
      const clock = new TestClock();
      await withTwoInstances(
        { clock, env: { SANDBOX_MAX_SESSIONS: '1', REDIS_URL: process.env.REDIS_URL ?? '' } },
        async (a, b) => {
          // b caches the session's user...
          await createFamily(b, 'first');
          clock.advance(EVICTION_GRACE_MS + MINUTE);
          // ...a evicts it to make room for another.
          await createFamily(a, 'second');
          expect(await sessionNames(a)).toEqual(['second']);
          // Without the invalidation, b would write with a deleted user (a foreign-key 500).
          // With it, b sees a clean session (evicting `second` in turn, as the cap is one).
          clock.advance(EVICTION_GRACE_MS + MINUTE);
          const res = await b.app.inject({
            method: 'POST',
            url: '/api/v1/families',
            headers: session('first'),
            payload: { name: 'again' },
          });
          expect(res.statusCode).toBe(201);
          expect(await ownFamilies(b, 'first')).toEqual(['again']);
        },
      );
    });
  },
);
