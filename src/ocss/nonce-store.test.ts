import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../../test/clock.js';
import { createMemoryNonceStore, createRedisNonceStore, nonceStoreKey } from './nonce-store.js';

const inFiveMinutes = (clock: TestClock) => new Date(clock.now().getTime() + 300_000);

describe('memory nonce store', () => {
  it('lets a nonce be claimed once per keyid', async () => {
    const clock = new TestClock();
    const store = createMemoryNonceStore({ clock });
    expect(await store.claim('did:a#k', 'n-1', inFiveMinutes(clock))).toBe(true);
    expect(await store.claim('did:a#k', 'n-1', inFiveMinutes(clock))).toBe(false);
    expect(await store.claim('did:b#k', 'n-1', inFiveMinutes(clock))).toBe(true);
    expect(await store.claim('did:a#k', 'n-2', inFiveMinutes(clock))).toBe(true);
  });

  it('forgets a nonce when the injected clock passes its expiry', async () => {
    const clock = new TestClock();
    const store = createMemoryNonceStore({ clock });
    const expiresAt = inFiveMinutes(clock);
    expect(await store.claim('k', 'n', expiresAt)).toBe(true);
    clock.advance(299_999);
    expect(await store.claim('k', 'n', expiresAt)).toBe(false);
    clock.advance(2);
    expect(await store.claim('k', 'n', inFiveMinutes(clock))).toBe(true);
    expect(await store.claim('k', 'n', inFiveMinutes(clock))).toBe(false);
  });

  it('holds an already expired claim for a moment, not forever', async () => {
    const clock = new TestClock();
    const store = createMemoryNonceStore({ clock });
    const past = new Date(clock.now().getTime() - 1000);
    expect(await store.claim('k', 'n', past)).toBe(true);
    expect(await store.claim('k', 'n', past)).toBe(false);
    clock.advance(2);
    expect(await store.claim('k', 'n', past)).toBe(true);
  });

  it('keys (keyid, nonce) unambiguously', () => {
    expect(nonceStoreKey('a#b', 'c')).not.toBe(nonceStoreKey('a', 'b#c'));
    expect(nonceStoreKey('a', 'bc')).not.toBe(nonceStoreKey('ab', 'c'));
    expect(nonceStoreKey('k', 'n')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is bounded: past maxNonces the least recently claimed is forgotten', async () => {
    const clock = new TestClock();
    const store = createMemoryNonceStore({ clock, maxNonces: 2 });
    for (const nonce of ['a', 'b', 'c']) {
      expect(await store.claim('k', nonce, inFiveMinutes(clock))).toBe(true);
    }
    expect(await store.claim('k', 'c', inFiveMinutes(clock))).toBe(false);
    expect(await store.claim('k', 'a', inFiveMinutes(clock))).toBe(true);
  });
});

describe('Redis nonce store when Redis is unreachable', () => {
  it('falls back to this process, reporting each failure to onError', async () => {
    const redis = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    const errors: Error[] = [];
    const clock = new TestClock();
    const store = createRedisNonceStore({ redis, clock, onError: (error) => errors.push(error) });
    try {
      expect(await store.claim('k', 'n', inFiveMinutes(clock))).toBe(true);
      expect(await store.claim('k', 'n', inFiveMinutes(clock))).toBe(false);
      expect(await store.claim('k', 'other', inFiveMinutes(clock))).toBe(true);
      expect(errors).toHaveLength(3);
      expect(errors[0]).toBeInstanceOf(Error);
    } finally {
      redis.disconnect();
    }
  });
});

const redisUrl = process.env.REDIS_URL;

describe.skipIf(!redisUrl)('Redis nonce store on a real Redis', () => {
  const keyPrefix = `haven:test:ocss-nonce:${randomUUID()}:`;
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(redisUrl ?? '');
  });

  afterAll(async () => {
    const keys = await admin.keys(`${keyPrefix}*`);
    if (keys.length > 0) {
      await admin.del(...keys);
    }
    admin.disconnect();
  });

  it('lets a nonce be claimed once across instances, with the TTL of its expiry', async () => {
    const clock = new TestClock();
    const first = new Redis(redisUrl ?? '');
    const second = new Redis(redisUrl ?? '');
    try {
      const onError = (error: Error) => {
        throw error;
      };
      const a = createRedisNonceStore({ redis: first, clock, keyPrefix, onError });
      const b = createRedisNonceStore({ redis: second, clock, keyPrefix, onError });
      expect(await a.claim('did:a#k', 'n-1', inFiveMinutes(clock))).toBe(true);
      expect(await b.claim('did:a#k', 'n-1', inFiveMinutes(clock))).toBe(false);
      expect(await a.claim('did:a#k', 'n-1', inFiveMinutes(clock))).toBe(false);
      expect(await b.claim('did:b#k', 'n-1', inFiveMinutes(clock))).toBe(true);

      const ttl = await admin.pttl(keyPrefix + nonceStoreKey('did:a#k', 'n-1'));
      expect(ttl).toBeGreaterThan(290_000);
      expect(ttl).toBeLessThanOrEqual(300_000);
    } finally {
      first.disconnect();
      second.disconnect();
    }
  });

  it('still refuses the nonces it claimed itself once Redis goes away', async () => {
    const clock = new TestClock();
    const redis = new Redis(redisUrl ?? '', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    await redis.connect();
    const errors: Error[] = [];
    const store = createRedisNonceStore({
      redis,
      clock,
      keyPrefix,
      onError: (error) => errors.push(error),
    });
    expect(await store.claim('k', 'seen-before-outage', inFiveMinutes(clock))).toBe(true);
    expect(errors).toEqual([]);

    redis.disconnect();
    expect(await store.claim('k', 'seen-before-outage', inFiveMinutes(clock))).toBe(false);
    expect(await store.claim('k', 'during-outage', inFiveMinutes(clock))).toBe(true);
    expect(await store.claim('k', 'during-outage', inFiveMinutes(clock))).toBe(false);
    expect(errors).toHaveLength(3);
  });
});
