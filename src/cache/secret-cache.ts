// Verified secrets (API keys, MCP tokens), kept briefly in memory by their SHA-256 so that a
// request costs no database round trip. Entries are dropped at once on revocation in this
// process and, through the invalidation bus, in every other; the TTL bounds staleness if an
// invalidation is ever lost. Unknown secrets are not cached: a key minted a moment ago on
// another instance must work at once.
import { LRUCache } from 'lru-cache';
import { hashSecret } from '../auth/secrets.js';
import type { Clock } from '../clock.js';
import type { InvalidationBus } from './invalidation-bus.js';

const MAX_ENTRIES = 10_000;
/** How long a cached record may be used: the staleness bound when an invalidation is lost. */
export const TTL_MS = 60_000;

export interface SecretCache<T> {
  /** The record of a presented secret, from memory or loaded by its hash. */
  lookup(secret: string): Promise<T | undefined>;
  /** The record of a presented secret if it is in memory now (never loads). */
  peek(secret: string): T | undefined;
  /** Drops a record here and on every other instance. */
  invalidate(secretHash: string): Promise<void>;
}

export function createSecretCache<T extends object>(options: {
  bus: InvalidationBus;
  channel: string;
  clock: Clock;
  load(secretHash: string): Promise<T | undefined>;
}): SecretCache<T> {
  const byHash = new LRUCache<string, T>({
    max: MAX_ENTRIES,
    ttl: TTL_MS,
    // Ages judged by the clock on every read: lru-cache would otherwise reuse a reading for
    // 1 ms of real time (a timer per read), blind to an injected clock's moves.
    ttlResolution: 0,
    perf: { now: () => options.clock.now().getTime() },
  });
  options.bus.subscribe(options.channel, (secretHash) => byHash.delete(secretHash));
  return {
    async lookup(secret) {
      const secretHash = hashSecret(secret);
      const cached = byHash.get(secretHash);
      if (cached) {
        return cached;
      }
      const loaded = await options.load(secretHash);
      if (loaded) {
        byHash.set(secretHash, loaded);
      }
      return loaded;
    },
    peek: (secret) => byHash.get(hashSecret(secret)),
    invalidate: (secretHash) => options.bus.publish(options.channel, secretHash),
  };
}
