import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase } from '../../../test/database.js';
import { eventually, proxyInFrontOf } from '../../../test/tcp-proxy.js';
import { connectPostgres } from '../../db/connect.js';

describe('GET /health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('is 200 ok while the database answers, and is not metered', async () => {
    const res = await t.app.inject({ url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', environment: 'sandbox', database: 'ok' });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('is 503 unavailable in the house envelope once the database is gone', async () => {
    const database = await createTestDatabase();
    const app = await buildTestApp({ database });
    await database.handle.close();
    app.clock.advance(5_000);
    const res = await app.app.inject({ url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      status: 'unavailable',
      error: 'Service Unavailable',
      message: 'database unavailable',
      code: 503,
      database: 'unavailable',
    });
    await app.app.close();
    await database.drop();
  });
});

describe('GET /health while the instance drains (graceful stop)', () => {
  it('answers 503 draining in its documented shape, and nothing logs at error level', async () => {
    const t = await buildTestApp();
    try {
      await t.app.drain(1_000);
      for (let poll = 0; poll < 5; poll++) {
        const res = await t.app.inject({ url: '/health' });
        expect(res.statusCode, res.body).toBe(503);
        expect(res.headers.connection).toBe('close');
        expect(res.json()).toEqual({
          status: 'draining',
          error: 'Service Unavailable',
          message: 'server is shutting down: retry shortly',
          code: 503,
          database: 'ok',
        });
      }
      // Every other route gets the drain's plain 503.
      const other = await t.app.inject({ url: '/api/v1/platforms' });
      expect(other.statusCode).toBe(503);
      expect(other.json().message).toBe('server is shutting down: retry shortly');
      expect(t.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('GET /health over a socket: probes answered ahead of the router', () => {
  /** Every header but the ones that differ per response. */
  const stable = (headers: Headers) =>
    Object.fromEntries(
      [...headers].filter(([name]) => !['date', 'x-request-id'].includes(name.toLowerCase())),
    );

  it('answers a fresh ok like the route does (body, headers, request id, access line)', async () => {
    const t = await buildListeningTestApp();
    try {
      const routed = await fetch(`${t.baseUrl}/health`);
      const routedBody = await routed.text();
      const routedLines = t.logs.filter((line) => line.msg === 'request completed').length;
      expect(routedLines).toBe(1);
      // The ping behind the first answer is fresh (the clock stands still): these are
      // answered before routing, with the same bytes and the headers every response has.
      for (let probe = 0; probe < 3; probe++) {
        const fast = await fetch(`${t.baseUrl}/health`, {
          headers: { 'x-request-id': `probe-${probe}` },
        });
        expect(fast.status).toBe(200);
        expect(await fast.text()).toBe(routedBody);
        expect(stable(fast.headers)).toEqual(stable(routed.headers));
        expect(fast.headers.get('x-request-id')).toBe(`probe-${probe}`);
      }
      // Each probe has its access line, as the routed one does.
      const lines = t.logs.filter((line) => line.msg === 'request completed');
      expect(lines.map((line) => [line.reqId, line.route, line.path, line.status])).toEqual([
        [lines[0]?.reqId, '/health', '/health', 200],
        ['probe-0', '/health', '/health', 200],
        ['probe-1', '/health', '/health', 200],
        ['probe-2', '/health', '/health', 200],
      ]);
      // Once the ping is a second old, the route answers (and pings) again.
      t.clock.advance(1_000);
      expect((await fetch(`${t.baseUrl}/health`)).status).toBe(200);
      expect(t.logs.filter((line) => line.msg === 'request completed').length).toBe(5);
    } finally {
      await t.database.drop();
    }
  });

  it('leaves a failed ping and a draining instance to the route', async () => {
    const database = await createTestDatabase();
    const t = await buildListeningTestApp({ database });
    try {
      expect((await fetch(`${t.baseUrl}/health`)).status).toBe(200);
      await t.app.drain(1_000);
      const draining = await fetch(`${t.baseUrl}/health`);
      expect(draining.status).toBe(503);
      expect(((await draining.json()) as { status: string }).status).toBe('draining');
    } finally {
      await t.app.close();
    }
    const down = await buildListeningTestApp({ database });
    try {
      await database.handle.close();
      down.clock.advance(5_000);
      for (let probe = 0; probe < 3; probe++) {
        const res = await fetch(`${down.baseUrl}/health`);
        expect(res.status).toBe(503);
        expect(((await res.json()) as { status: string }).status).toBe('unavailable');
      }
    } finally {
      await down.app.close();
      await database.drop();
    }
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.runIf(databaseUrl)('GET /health when PostgreSQL goes away and comes back', () => {
  it('answers 503 while the connection is cut and recovers by itself', async () => {
    const database = await createTestDatabase();
    const { proxy, url: viaProxy } = await proxyInFrontOf(database.url ?? '');
    const handle = connectPostgres(viaProxy);
    const clock = new TestClock();
    const t = await buildTestApp({ database: { ...database, handle }, clock });
    const health = async () => {
      clock.advance(2_000); // step past the one-second answer cache
      return (await t.app.inject({ url: '/health' })).statusCode;
    };
    try {
      expect(await health()).toBe(200);
      await proxy.cut();
      await eventually(async () => (await health()) === 503, 'health to report 503');
      await proxy.restore();
      await eventually(async () => (await health()) === 200, 'health to recover');
    } finally {
      await t.app.close();
      await handle.close();
      await proxy.cut();
      await database.drop();
    }
  });
});
