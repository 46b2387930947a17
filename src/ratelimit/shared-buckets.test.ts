// Two instances against one Redis share every bucket exactly; with Redis cut off they keep
// serving from their own memory, and share again once it is back.
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/app.js';
import { TestClock } from '../../test/clock.js';
import { bearer, createOrg, mintKey, newSession } from '../../test/identity.js';
import { withTwoInstances } from '../../test/instances.js';
import { eventually, proxyInFrontOf } from '../../test/tcp-proxy.js';

const redisUrl = process.env.REDIS_URL;
const shared = Boolean(process.env.DATABASE_URL && redisUrl);

describe.runIf(shared)('rate limits shared through Redis', () => {
  it('counts requests to two instances in one org bucket', async () => {
    // A clock of its own, far from other tests' buckets in the shared Redis.
    const clock = new TestClock(new Date(Date.now() + Math.random() * 1e12));
    await withTwoInstances({ clock, env: { REDIS_URL: redisUrl ?? '' } }, async (a, b) => {
      const owner = await newSession(a.app);
      const org = await createOrg(a.app, owner);
      const key = await mintKey(a.app, owner, org.id);
      const call = (i: number) =>
        (i % 2 === 0 ? a : b).app.inject({
          url: '/api/v1/developer/families',
          headers: bearer(key.key),
        });
      for (let i = 0; i < 100; i++) {
        const res = await call(i);
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-remaining']).toBe(String(99 - i));
      }
      expect((await call(0)).statusCode).toBe(429);
      expect((await call(1)).statusCode).toBe(429);
    });
  });

  it('falls back to the process while Redis is unreachable, logs it once, and rejoins', async () => {
    const { proxy, url: viaProxy } = await proxyInFrontOf(redisUrl ?? '');
    const clock = new TestClock(new Date(Date.now() + Math.random() * 1e12));
    const t = await buildTestApp({ clock, env: { REDIS_URL: viaProxy } });
    try {
      const owner = await newSession(t.app);
      const call = () => t.app.inject({ url: '/api/v1/families', headers: owner.auth });
      await eventually(async () => (await call()).statusCode === 200, 'first request');
      await proxy.cut();
      for (let i = 0; i < 5; i++) {
        const res = await call();
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBe('100');
      }
      await eventually(
        async () => t.logs.some((l) => String(l.msg).startsWith('redis unavailable: rate limits')),
        'the fallback to be logged',
      );
      const warnings = t.logs.filter((l) =>
        String(l.msg).startsWith('redis unavailable: rate limits'),
      );
      expect(warnings).toHaveLength(1);
      await proxy.restore();
      await eventually(
        async () => t.logs.some((l) => String(l.msg).startsWith('redis available again: rate')),
        'Redis to be used again',
      );
      expect((await call()).statusCode).toBe(200);
    } finally {
      await t.close();
      await proxy.cut();
    }
  });
});
