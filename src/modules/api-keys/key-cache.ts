// Verified keys, kept briefly in memory so a request costs no database round trip. Entries
// are dropped at once on revocation (this process) and through the invalidation bus (every
// other process); the TTL bounds staleness if an invalidation is ever lost.
import { LRUCache } from 'lru-cache';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Clock } from '../../clock.js';
import type { ApiKeyRow } from './store.js';

const MAX_KEYS = 10_000;
const TTL_MS = 60_000;
export const API_KEY_CHANNEL = 'api-keys';

export type CachedKey = Pick<
  ApiKeyRow,
  'id' | 'org_id' | 'environment' | 'scopes' | 'expires_at' | 'revoked_at'
>;

export function createKeyCache(bus: InvalidationBus, clock: Clock) {
  const byHash = new LRUCache<string, CachedKey>({
    max: MAX_KEYS,
    ttl: TTL_MS,
    perf: { now: () => clock.now().getTime() },
  });
  bus.subscribe(API_KEY_CHANNEL, (keyHash) => byHash.delete(keyHash));
  return {
    get: (keyHash: string) => byHash.get(keyHash),
    set: (keyHash: string, key: CachedKey) => byHash.set(keyHash, key),
    /** Drops the key here and on every other instance. */
    invalidate: (keyHash: string) => bus.publish(API_KEY_CHANNEL, keyHash),
  };
}

export type KeyCache = ReturnType<typeof createKeyCache>;
