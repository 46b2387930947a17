// docs/decisions.md "The database away is a 503": PostgreSQL cut under the app — product routes
// fail fast with 503 in the envelope, never hang or 500, and serve again once it returns.
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase } from '../../../test/database.js';
import { eventually, proxyInFrontOf } from '../../../test/tcp-proxy.js';
import { connectPostgres } from '../../db/connect.js';

const databaseUrl = process.env.DATABASE_URL;

describe.runIf(databaseUrl)('product routes while PostgreSQL is away', () => {
  it('answer 503 within the bound while the connection is cut, and recover by themselves', async () => {
    const database = await createTestDatabase();
    const { proxy, url: viaProxy } = await proxyInFrontOf(database.url ?? '');
    const handle = connectPostgres(viaProxy);
    const clock = new TestClock();
    const t = await buildTestApp({ database: { ...database, handle }, clock });
    const who = { 'x-sandbox-session': 'outage' };
    const read = () => t.app.inject({ url: '/api/v1/families', headers: who });
    const write = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/families',
        headers: who,
        payload: { name: 'During' },
      });
    try {
      expect((await read()).statusCode).toBe(200);
      await proxy.cut();
      for (const request of [read, write, read, write]) {
        const started = Date.now();
        const res = await request();
        expect(res.statusCode, res.body).toBe(503);
        expect(res.json()).toEqual({
          error: 'Service Unavailable',
          message: 'database unavailable: retry shortly',
          code: 503,
        });
        // Bounded by the pool's 5 s connection timeout: a cut never turns into a hang.
        expect(Date.now() - started).toBeLessThan(10_000);
      }
      // Under load: 24 reads and writes at once, every one a prompt 503, none a hang.
      const started = Date.now();
      const burst = await Promise.all(
        Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? read() : write())),
      );
      expect(burst.map((res) => res.statusCode)).toEqual(Array(24).fill(503));
      expect(Date.now() - started).toBeLessThan(10_000);
      const health = await t.app.inject({ url: '/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({ status: 'unavailable', database: 'unavailable' });
      expect(t.logs.some((line) => line.msg === 'internal error')).toBe(false);
      await proxy.restore();
      await eventually(async () => (await read()).statusCode === 200, 'reads to recover');
      expect((await write()).statusCode).toBe(201);
      clock.advance(1_000); // past the health answer's one-second cache
      expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await t.app.close();
      await handle.close();
      await proxy.cut();
      await database.drop();
    }
  });
});
