// Single use of a signature `nonce` within its validity window. Only requests whose
// signature already verified reach `claim`, so filling the store takes valid signatures from
// trust-list keys, not anonymous traffic.
import { hash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';

export interface NonceStore {
  /** True the first time (keyid, nonce) is claimed before `expiresAt`, false on a reuse. */
  claim(keyid: string, nonce: string, expiresAt: Date): Promise<boolean>;
}

/**
 * At most this many live nonces per process; past it the least recently claimed is
 * forgotten first. Forgetting one early reopens it for replay, so the bound must stay well
 * above the number of signed requests one window (300 s) can carry.
 */
const DEFAULT_MAX_NONCES = 100_000;

/**
 * One fixed-size key per (keyid, nonce): neither part can spill into the other. One per
 * signed request, so the one-shot `crypto.hash` (~0.3 µs against ~1 µs for a Hash object).
 */
export function nonceStoreKey(keyid: string, nonce: string): string {
  return hash('sha256', JSON.stringify([keyid, nonce]), 'hex');
}

export function createMemoryNonceStore(options: { clock: Clock; maxNonces?: number }): NonceStore {
  const { clock } = options;
  const claimed = new LRUCache<string, true>({
    max: options.maxNonces ?? DEFAULT_MAX_NONCES,
    // Entries age on the injected clock; a resolution of 0 reads it on every check instead
    // of caching "now" for a millisecond of real time.
    perf: { now: () => clock.now().getTime() },
    ttlResolution: 0,
  });
  return {
    async claim(keyid, nonce, expiresAt) {
      const key = nonceStoreKey(keyid, nonce);
      if (claimed.has(key)) {
        return false;
      }
      // lru-cache reads a TTL of 0 as "forever": an already expired claim lives 1 ms.
      const ttl = Math.max(1, expiresAt.getTime() - clock.now().getTime());
      claimed.set(key, true, { ttl });
      return true;
    },
  };
}

const REDIS_KEY_PREFIX = 'haven:ocss:nonce:';

/**
 * Nonces shared by every instance through Redis (`SET key 1 NX PX ttl`). Each claim is also
 * recorded in this process, which is where a claim goes when Redis fails: during an outage
 * an instance still refuses the nonces it has seen itself, and only those seen by other
 * instances alone can be replayed against it. `onError` hears every Redis failure; this
 * module logs nothing.
 */
export function createRedisNonceStore(options: {
  redis: Redis;
  clock: Clock;
  onError?: (error: Error) => void;
  keyPrefix?: string;
  local?: NonceStore;
}): NonceStore {
  const { redis, clock } = options;
  const prefix = options.keyPrefix ?? REDIS_KEY_PREFIX;
  const local = options.local ?? createMemoryNonceStore({ clock });
  return {
    async claim(keyid, nonce, expiresAt) {
      const ttl = Math.max(1, expiresAt.getTime() - clock.now().getTime());
      let firstInRedis: boolean;
      try {
        firstInRedis =
          (await redis.set(prefix + nonceStoreKey(keyid, nonce), '1', 'PX', ttl, 'NX')) === 'OK';
      } catch (error) {
        options.onError?.(error as Error);
        return local.claim(keyid, nonce, expiresAt);
      }
      if (!firstInRedis) {
        return false;
      }
      // Redis said first use; the local record serves a later outage (and catches a nonce
      // Redis lost in a failover).
      return local.claim(keyid, nonce, expiresAt);
    },
  };
}
