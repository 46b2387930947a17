// The probes (CONTRACT.md §13): GET /health/live and GET /health/ready, their shapes, what
// turns readiness to 503 (the database away, Redis away, the instance stopping) and back,
// that neither is metered, and their answers ahead of the router.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase } from '../../../test/database.js';
import { bearer, createOrg, mintKey, newSession } from '../../../test/identity.js';
import { eventually, proxyInFrontOf } from '../../../test/tcp-proxy.js';
import { connectPostgres } from '../../db/connect.js';

const READY = {
  status: 'ok',
  checks: { database: 'ok', redis: 'not_configured', draining: false },
};

describe('GET /health/live and GET /health/ready', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('answer 200 in their shapes while the database answers', async () => {
    const live = await t.app.inject({ url: '/health/live' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual(READY);
    // /health keeps its own shape.
    expect((await t.app.inject({ url: '/health' })).json()).toEqual({
      status: 'ok',
      environment: 'sandbox',
      database: 'ok',
    });
  });

  it('are never metered: no rate-limit headers, no 429 past the limit, no usage for a key', async () => {
    const owner = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    const key = await mintKey(t.app, owner, org.id);
    // Past both the anonymous per-address limit and the org's (100 a minute each).
    for (let i = 0; i < 110; i++) {
      for (const url of ['/health/live', '/health/ready']) {
        const res = await t.app.inject({ url, headers: bearer(key.key) });
        expect(res.statusCode, `${url} #${i}`).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
    await t.app.flushUsage();
    const usage = await t.app.inject({
      url: `/api/v1/developers/orgs/${org.id}/usage`,
      headers: owner.auth,
    });
    expect(usage.statusCode).toBe(200);
    expect(usage.json()).toEqual([]);
  });

  it('are in the OpenAPI document under Meta', async () => {
    const paths = (await t.app.inject({ url: '/openapi.json' })).json().paths;
    expect(paths['/health/live'].get).toMatchObject({
      operationId: 'getLiveness',
      tags: ['Meta'],
      summary: expect.any(String),
    });
    expect(paths['/health/ready'].get).toMatchObject({
      operationId: 'getReadiness',
      tags: ['Meta'],
      summary: expect.any(String),
    });
    expect(Object.keys(paths['/health/ready'].get.responses)).toEqual(
      expect.arrayContaining(['200', '503']),
    );
  });
});

describe('GET /health/ready while the instance stops', () => {
  it('is 503 from the stop announced on (requests still served), live stays 200 through the drain', async () => {
    const t = await buildTestApp();
    const who = { 'x-sandbox-session': 'stopping' };
    try {
      t.app.announceStop();
      const ready = await t.app.inject({ url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({
        status: 'unavailable',
        error: 'Service Unavailable',
        message: 'not ready: the instance is stopping',
        code: 503,
        checks: { database: 'ok', redis: 'not_configured', draining: true },
      });
      // Everything else is still served: this is the window balancers need to notice.
      expect((await t.app.inject({ url: '/api/v1/families', headers: who })).statusCode).toBe(200);
      expect((await t.app.inject({ url: '/health/live' })).statusCode).toBe(200);
      // /health, which balancers read too, says so from the same moment.
      const health = await t.app.inject({ url: '/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({ status: 'draining', database: 'ok' });

      await t.app.drain(1_000);
      const drained = await t.app.inject({ url: '/health/ready' });
      expect(drained.statusCode).toBe(503);
      expect(drained.headers.connection).toBe('close');
      expect(drained.json().checks).toEqual({
        database: 'ok',
        redis: 'not_configured',
        draining: true,
      });
      // A liveness failure gets a process killed: it stays 200 while the drain runs.
      const live = await t.app.inject({ url: '/health/live' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toEqual({ status: 'ok' });
      expect((await t.app.inject({ url: '/api/v1/families', headers: who })).statusCode).toBe(503);
      expect(t.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('GET /health/ready when the database is gone', () => {
  it('is 503 naming the database, in the house envelope; live stays 200', async () => {
    const database = await createTestDatabase();
    const t = await buildTestApp({ database });
    try {
      expect((await t.app.inject({ url: '/health/ready' })).statusCode).toBe(200);
      await database.handle.close();
      t.clock.advance(5_000); // past the one-second answer cache
      const ready = await t.app.inject({ url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({
        status: 'unavailable',
        error: 'Service Unavailable',
        message: 'not ready: database unavailable',
        code: 503,
        checks: { database: 'unavailable', redis: 'not_configured', draining: false },
      });
      expect((await t.app.inject({ url: '/health/live' })).statusCode).toBe(200);
    } finally {
      await t.app.close();
      await database.drop();
    }
  });
});

describe('the probes over a socket: answered ahead of the router', () => {
  /** Every header but the ones that differ per response. */
  const stable = (headers: Headers) =>
    Object.fromEntries(
      [...headers].filter(([name]) => !['date', 'x-request-id'].includes(name.toLowerCase())),
    );

  it('answer as their routes do (body, headers, request id, access line), and never while stopping', async () => {
    const t = await buildListeningTestApp();
    try {
      // A query string goes to the route: the routed answers to compare with.
      const routedLive = await fetch(`${t.baseUrl}/health/live?routed=1`);
      const routedLiveBody = await routedLive.text();
      const routedReady = await fetch(`${t.baseUrl}/health/ready`);
      const routedReadyBody = await routedReady.text();
      expect(JSON.parse(routedReadyBody)).toEqual(READY);
      for (let probe = 0; probe < 3; probe++) {
        for (const [path, routed, body] of [
          ['/health/live', routedLive, routedLiveBody],
          ['/health/ready', routedReady, routedReadyBody],
        ] as const) {
          const fast = await fetch(`${t.baseUrl}${path}`, {
            headers: { 'x-request-id': `probe-${probe}` },
          });
          expect(fast.status).toBe(200);
          expect(await fast.text()).toBe(body);
          expect(stable(fast.headers)).toEqual(stable(routed.headers));
          expect(fast.headers.get('x-request-id')).toBe(`probe-${probe}`);
        }
      }
      const lines = t.logs.filter((line) => line.msg === 'request completed');
      expect(lines.filter((line) => line.reqId === 'probe-2').map((line) => line.route)).toEqual([
        '/health/live',
        '/health/ready',
      ]);

      // The ping is still fresh (the clock stands still), yet a stopping instance is not ready.
      t.app.announceStop();
      const stopping = await fetch(`${t.baseUrl}/health/ready`);
      expect(stopping.status).toBe(503);
      expect(((await stopping.json()) as { checks: unknown }).checks).toEqual({
        ...READY.checks,
        draining: true,
      });
      expect((await fetch(`${t.baseUrl}/health/live`)).status).toBe(200);
      // /health's fast path leaves it to the route, which says `draining`.
      const health = await fetch(`${t.baseUrl}/health`);
      expect(health.status).toBe(503);
      expect(((await health.json()) as { status: string }).status).toBe('draining');
    } finally {
      await t.close();
    }
  });
});

const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;

describe.runIf(databaseUrl)('GET /health/ready when PostgreSQL goes away and comes back', () => {
  it('answers 503 while the connection is cut and 200 again by itself', async () => {
    const database = await createTestDatabase();
    const { proxy, url: viaProxy } = await proxyInFrontOf(database.url ?? '');
    const handle = connectPostgres(viaProxy);
    const clock = new TestClock();
    const t = await buildTestApp({ database: { ...database, handle }, clock });
    const ready = async () => {
      clock.advance(2_000); // step past the one-second answer cache
      const res = await t.app.inject({ url: '/health/ready' });
      return { status: res.statusCode, checks: res.json().checks };
    };
    try {
      expect(await ready()).toEqual({ status: 200, checks: READY.checks });
      await proxy.cut();
      await eventually(async () => (await ready()).status === 503, 'ready to report 503');
      expect(await ready()).toEqual({
        status: 503,
        checks: { database: 'unavailable', redis: 'not_configured', draining: false },
      });
      await proxy.restore();
      await eventually(async () => (await ready()).status === 200, 'ready to recover');
    } finally {
      await t.app.close();
      await handle.close();
      await proxy.cut();
      await database.drop();
    }
  });
});

describe.runIf(redisUrl)('GET /health/ready when Redis goes away and comes back', () => {
  it('is 200 with redis ok, 503 naming redis while it is cut, and 200 again by itself', async () => {
    const { proxy, url: viaProxy } = await proxyInFrontOf(redisUrl ?? '');
    const t = await buildTestApp({ env: { REDIS_URL: viaProxy } });
    const ready = async () => {
      t.clock.advance(2_000); // step past the one-second answer cache
      const res = await t.app.inject({ url: '/health/ready' });
      return { status: res.statusCode, body: res.json() };
    };
    const redisOk = { database: 'ok', redis: 'ok', draining: false };
    try {
      // The connection is opened at start: the first answers may come before it is up.
      await eventually(async () => (await ready()).status === 200, 'ready with redis');
      expect((await ready()).body).toEqual({ status: 'ok', checks: redisOk });
      await proxy.cut();
      await eventually(async () => (await ready()).status === 503, 'ready to report 503');
      expect((await ready()).body).toEqual({
        status: 'unavailable',
        error: 'Service Unavailable',
        message: 'not ready: redis unavailable',
        code: 503,
        checks: { ...redisOk, redis: 'unavailable' },
      });
      // Liveness checks no dependency.
      expect((await t.app.inject({ url: '/health/live' })).statusCode).toBe(200);
      await proxy.restore();
      await eventually(async () => (await ready()).status === 200, 'ready to recover');
      expect((await ready()).body).toEqual({ status: 'ok', checks: redisOk });
    } finally {
      await t.close();
      await proxy.cut();
    }
  });
});
