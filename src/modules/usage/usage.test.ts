import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import {
  bearer,
  createOrg,
  longSession,
  mintKey,
  newSession,
  type Session,
} from '../../../test/identity.js';

describe('usage rollups and last-used stamps', () => {
  let t: TestApp;
  let owner: Session;
  let orgId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    t.clock.set('2026-02-01T10:15:00.000Z');
    owner = await longSession(t);
    orgId = (await createOrg(t.app, owner)).id;
  });
  afterAll(async () => t.close());

  const usage = async (query = '') => {
    const res = await t.app.inject({
      url: `/api/v1/developers/orgs/${orgId}/usage${query}`,
      headers: owner.auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Array<Record<string, unknown>>;
  };

  it('counts every key request by key, UTC hour, route pattern and status class', async () => {
    const one = await mintKey(t.app, owner, orgId, { name: 'one' });
    const two = await mintKey(t.app, owner, orgId, { name: 'two', scopes: ['read:families'] });
    const get = (secret: string, prefix = '/api/v1/developer') =>
      t.app.inject({
        url: `${prefix}/families`,
        headers: bearer(secret),
        remoteAddress: '198.51.100.9',
      });
    const post = (secret: string, payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/developer/families',
        headers: bearer(secret),
        payload: payload as object,
      });

    for (let i = 0; i < 3; i++) {
      expect((await get(one.key)).statusCode).toBe(200);
    }
    expect((await get(one.key, '/api/v1')).statusCode).toBe(200);
    expect((await post(one.key, { name: 'Usage Family' })).statusCode).toBe(201);
    expect((await post(one.key, {})).statusCode).toBe(400);
    expect((await post(two.key, { name: 'no scope' })).statusCode).toBe(403);
    expect((await get(two.key)).statusCode).toBe(200);
    t.clock.set('2026-02-01T11:00:00.000Z');
    expect((await get(two.key)).statusCode).toBe(200);
    // Not authenticated by a key: not counted.
    expect((await get(`svc_test_${'n'.repeat(40)}`)).statusCode).toBe(401);

    await t.app.flushUsage();
    const rows = (await usage()).map(({ id: _id, org_id: _org, ...row }) => row);
    expect(rows).toHaveLength(4);
    expect(rows[0]?.hour).toBe('2026-02-01T11:00:00.000Z');
    expect(rows).toEqual(
      expect.arrayContaining([
        {
          key_id: two.id,
          hour: '2026-02-01T11:00:00.000Z',
          endpoint: '/api/v1/developer/families',
          status_2xx: 1,
          status_4xx: 0,
          status_5xx: 0,
          total_requests: 1,
        },
        {
          key_id: one.id,
          hour: '2026-02-01T10:00:00.000Z',
          endpoint: '/api/v1/developer/families',
          status_2xx: 4,
          status_4xx: 1,
          status_5xx: 0,
          total_requests: 5,
        },
        {
          key_id: two.id,
          hour: '2026-02-01T10:00:00.000Z',
          endpoint: '/api/v1/developer/families',
          status_2xx: 1,
          status_4xx: 1,
          status_5xx: 0,
          total_requests: 2,
        },
        {
          key_id: one.id,
          hour: '2026-02-01T10:00:00.000Z',
          endpoint: '/api/v1/families',
          status_2xx: 1,
          status_4xx: 0,
          status_5xx: 0,
          total_requests: 1,
        },
      ]),
    );
    expect(await usage(`?key_id=${two.id}`)).toHaveLength(2);

    // Further flushes add to the same hour's row, never replace or double it.
    await get(one.key, '/api/v1');
    await t.app.flushUsage();
    await get(one.key, '/api/v1');
    await t.app.flushUsage();
    await t.app.flushUsage();
    const again = await usage(`?key_id=${one.id}`);
    const totals = again
      .filter((r) => r.endpoint === '/api/v1/families')
      .map((r) => [r.hour, r.total_requests]);
    expect(totals).toEqual([
      ['2026-02-01T11:00:00.000Z', 2],
      ['2026-02-01T10:00:00.000Z', 1],
    ]);

    const keys = (
      await t.app.inject({ url: `/api/v1/developers/orgs/${orgId}/keys`, headers: owner.auth })
    ).json();
    const stamped = keys.find((k: { id: string }) => k.id === one.id);
    expect(stamped.last_used_at).toBe('2026-02-01T11:00:00.000Z');
    expect(stamped.last_used_ip).toBe('198.51.100.9');
  });

  it('reads back only the last `days` days, and validates its query', async () => {
    t.clock.set('2026-03-15T00:00:00.000Z');
    expect(await usage('?days=30')).toEqual([]);
    expect((await usage('?days=60')).length).toBeGreaterThan(0);
    for (const days of ['0', '366', 'abc', '1.5']) {
      const res = await t.app.inject({
        url: `/api/v1/developers/orgs/${orgId}/usage?days=${days}`,
        headers: owner.auth,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe('days must be between 1 and 365');
    }
    const stranger = await newSession(t.app);
    const peek = await t.app.inject({
      url: `/api/v1/developers/orgs/${orgId}/usage`,
      headers: stranger.auth,
    });
    expect(peek.statusCode).toBe(404);
  });
});

describe('usage from several instances', () => {
  it('adds up what every instance counted, without losing or doubling', async () => {
    const a = await buildTestApp();
    const b = await buildTestApp({ database: a.database, clock: a.clock });
    try {
      const owner = await longSession(a);
      const orgId = (await createOrg(a.app, owner)).id;
      const key = await mintKey(a.app, owner, orgId);
      const hit = (t: TestApp) =>
        t.app.inject({ url: '/api/v1/developer/platforms', headers: bearer(key.key) });
      for (let i = 0; i < 7; i++) {
        await hit(a);
      }
      for (let i = 0; i < 5; i++) {
        await hit(b);
      }
      await Promise.all([a.app.flushUsage(), b.app.flushUsage()]);
      await hit(b);
      await b.app.close(); // shutdown flushes what is left
      const rows = (
        await a.app.inject({ url: `/api/v1/developers/orgs/${orgId}/usage`, headers: owner.auth })
      ).json();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        endpoint: '/api/v1/developer/platforms',
        status_2xx: 13,
        total_requests: 13,
      });
    } finally {
      await a.close();
    }
  });
});
