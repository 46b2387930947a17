// Two instances on one PostgreSQL and one Redis: a key revoked through one is refused by
// the other, whose cache held it as valid a moment before. With Redis cut off (a proxy the
// test controls, never the shared server), revocations stay in the process that made them,
// other instances' caches are stale for at most their TTL, and propagation resumes when
// Redis is back.
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { bearer, createOrg, mintKey, newSession } from '../../../test/identity.js';
import { withTwoInstances } from '../../../test/instances.js';
import { eventually, proxyInFrontOf } from '../../../test/tcp-proxy.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const UNAVAILABLE = 'redis unavailable: invalidations stay in this process';
const AVAILABLE = 'redis available again';

describe.runIf(shared)('key revocation across instances (Redis)', () => {
  it('reaches the other instance without waiting for its cache to expire', async () => {
    const env = { REDIS_URL: process.env.REDIS_URL ?? '' };
    await withTwoInstances({ clock: new TestClock(), env }, async (a, b) => {
      const owner = await newSession(a.app);
      const org = await createOrg(a.app, owner);
      const key = await mintKey(a.app, owner, org.id);
      const onB = () =>
        b.app.inject({ url: '/api/v1/developer/families', headers: bearer(key.key) });
      expect((await onB()).statusCode).toBe(200); // B now caches the key as valid

      const revoke = await a.app.inject({
        method: 'DELETE',
        url: `/api/v1/developers/orgs/${org.id}/keys/${key.id}`,
        headers: owner.auth,
      });
      expect(revoke.statusCode).toBe(204);
      // The clock does not move: B's 60 s cache TTL cannot be what drops the key.
      await eventually(async () => (await onB()).statusCode === 401, 'B to refuse the key', 2_000);
      expect((await onB()).json().message).toBe('API key has been revoked');
    });
  });

  it('keeps revocations in the process while Redis is unreachable, logs it once, and rejoins', async () => {
    const { proxy, url: viaProxy } = await proxyInFrontOf(process.env.REDIS_URL ?? '');
    // Every ioredis client's events, to show that reconnect attempts keep failing (and
    // firing 'error') while Redis is away, yet the warning stays at one line.
    const emit = vi.spyOn(Redis.prototype, 'emit');
    const refusedConnections = () => {
      const byClient = new Map<unknown, number>();
      emit.mock.calls.forEach(([event, error], i) => {
        if (
          event === 'error' &&
          (error as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED'
        ) {
          const client = emit.mock.contexts[i];
          byClient.set(client, (byClient.get(client) ?? 0) + 1);
        }
      });
      return [...byClient.values()];
    };
    const clock = new TestClock();
    try {
      await withTwoInstances({ clock, env: { REDIS_URL: viaProxy } }, async (a, b) => {
        const lines = (t: TestApp, msg: string) => t.logs.filter((l) => l.msg === msg);
        const owner = await newSession(a.app);
        const org = await createOrg(a.app, owner);
        const revoke = async (on: TestApp, keyId: string) => {
          const res = await on.app.inject({
            method: 'DELETE',
            url: `/api/v1/developers/orgs/${org.id}/keys/${keyId}`,
            headers: owner.auth,
          });
          expect(res.statusCode).toBe(204);
        };
        const call = (on: TestApp, secret: string) =>
          on.app.inject({ url: '/api/v1/developer/families', headers: bearer(secret) });

        // 1. K1 is valid, and B caches it as valid.
        const k1 = await mintKey(a.app, owner, org.id);
        expect((await call(b, k1.key)).statusCode).toBe(200);

        // 2. Redis goes away. A revocation through A still takes effect on A at once.
        await proxy.cut();
        await revoke(a, k1.id);
        const onA = await call(a, k1.key);
        expect(onA.statusCode).toBe(401);
        expect(onA.json().message).toBe('API key has been revoked');

        // More revocations through both instances, more requests, and several failed
        // reconnect attempts by every client: the warning stays at one line per instance.
        for (const on of [a, b, a, b]) {
          const extra = await mintKey(on.app, owner, org.id);
          expect((await call(on, extra.key)).statusCode).toBe(200);
          await revoke(on, extra.id);
          expect((await call(on, extra.key)).statusCode).toBe(401);
        }
        await eventually(async () => {
          // Every client behind the proxy (both buses' publisher and subscriber among them).
          const refused = refusedConnections();
          return refused.length >= 4 && refused.every((n) => n >= 3);
        }, 'every Redis client to fail reconnecting several times');
        for (const t of [a, b]) {
          await eventually(
            async () => lines(t, UNAVAILABLE).length > 0,
            'the fallback to be logged',
          );
          expect(lines(t, UNAVAILABLE)).toHaveLength(1);
          expect(lines(t, AVAILABLE)).toHaveLength(0);
        }

        // 3. The documented fallback: without Redis, B never hears of the revocation and may
        // keep accepting K1 from its cache (here it does: nothing could have told it), but
        // only until the cache TTL (60 s) drops it; B then reads the key from PostgreSQL and
        // refuses it. Staleness while Redis is away is bounded by that TTL.
        expect((await call(b, k1.key)).statusCode).toBe(200);
        clock.advance(61_000);
        const onB = await call(b, k1.key);
        expect(onB.statusCode).toBe(401);
        expect(onB.json().message).toBe('API key has been revoked');

        // 4. Redis comes back: both instances say so once, and revocations reach B again
        // without its cache having to expire (the clock stands still from here on).
        await proxy.restore();
        for (const t of [a, b]) {
          await eventually(async () => lines(t, AVAILABLE).length > 0, 'Redis to be used again');
        }
        const k2 = await mintKey(a.app, owner, org.id);
        expect((await call(b, k2.key)).statusCode).toBe(200); // B caches K2 as valid
        await revoke(a, k2.id);
        await eventually(
          async () => (await call(b, k2.key)).statusCode === 401,
          'B to refuse K2',
          2_000,
        );
        expect((await call(b, k2.key)).json().message).toBe('API key has been revoked');
        for (const t of [a, b]) {
          expect(lines(t, UNAVAILABLE)).toHaveLength(1);
          expect(lines(t, AVAILABLE)).toHaveLength(1);
        }
      });
    } finally {
      emit.mockRestore();
      await proxy.cut();
    }
  });
});
