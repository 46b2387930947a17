import { describe, expect, it } from 'vitest';
import { decide, TimestampLog, WINDOW_MS } from './sliding-window.js';
import { createMemoryStore } from './stores.js';

const T0 = Date.parse('2026-01-15T12:00:00.000Z');

describe('sliding window', () => {
  it('allows `limit` requests, refuses the next, and does not count refusals', async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 100; i++) {
      const d = await store.hit('b', 100, T0 + i * 10);
      expect(d).toMatchObject({ allowed: true, remaining: 99 - i, limit: 100 });
    }
    const refused = await store.hit('b', 100, T0 + 1_000);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfter: 59 });
    expect(refused.resetAt).toBe((T0 + WINDOW_MS) / 1000);
    // Refusals do not extend the wait: the oldest entry still decides.
    const again = await store.hit('b', 100, T0 + 30_000);
    expect(again).toMatchObject({ allowed: false, retryAfter: 30 });
  });

  it('slides: capacity returns as each old request leaves, not at the minute', async () => {
    const store = createMemoryStore();
    // 50 requests at t=0 s, 50 at t=30 s.
    for (let i = 0; i < 50; i++) {
      await store.hit('b', 100, T0);
    }
    for (let i = 0; i < 50; i++) {
      await store.hit('b', 100, T0 + 30_000);
    }
    expect((await store.hit('b', 100, T0 + 59_999)).allowed).toBe(false);
    // At 60 s the first 50 leave; the 50 from t=30 s still count.
    const after = await store.hit('b', 100, T0 + 60_000);
    expect(after).toMatchObject({ allowed: true, remaining: 49 });
    expect(after.resetAt).toBe(Math.ceil((T0 + 90_000) / 1000));
    for (let i = 0; i < 49; i++) {
      expect((await store.hit('b', 100, T0 + 60_001)).allowed).toBe(true);
    }
    expect((await store.hit('b', 100, T0 + 60_002)).allowed).toBe(false);
  });

  it('keeps buckets apart', async () => {
    const store = createMemoryStore();
    await store.hit('a', 1, T0);
    expect((await store.hit('a', 1, T0)).allowed).toBe(false);
    expect((await store.hit('c', 1, T0)).allowed).toBe(true);
  });

  it('reports reset as the epoch second the oldest request leaves', () => {
    expect(decide(10, T0 + 5_500, 3, T0 + 1_200)).toEqual({
      allowed: true,
      limit: 10,
      remaining: 6,
      resetAt: Math.ceil((T0 + 61_200) / 1000),
      retryAfter: 0,
    });
  });

  it('grows its log without losing order', () => {
    const log = new TimestampLog(2);
    for (let i = 0; i < 10; i++) {
      log.push(T0 + i);
    }
    log.prune(T0 + WINDOW_MS + 4);
    expect(log.length).toBe(5);
    expect(log.oldest()).toBe(T0 + 5);
  });
});
