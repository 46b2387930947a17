// Where rolling windows live: in this process, or in Redis so that every instance shares
// each bucket. The Redis store falls back to the process when Redis is unreachable, says so
// once in the log, and returns to Redis when it is back.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { decide, TimestampLog, WINDOW_MS, type WindowDecision } from './sliding-window.js';

export interface RateLimitStore {
  /**
   * Counts one request in `bucket` at `now` (epoch ms) unless the window is full. The
   * in-process store answers synchronously: a request it meters waits for no promise.
   */
  hit(bucket: string, limit: number, now: number): WindowDecision | Promise<WindowDecision>;
  /** Whether hit() always answers synchronously (the in-process store). */
  readonly synchronous: boolean;
  close(): Promise<void>;
}

/**
 * At most this many buckets are tracked; the least recently used is forgotten first (an
 * idle bucket is empty after 60 s anyway), so a flood of distinct IPs cannot exhaust memory.
 */
const MAX_BUCKETS = 100_000;

export function createMemoryStore(): RateLimitStore {
  const buckets = new LRUCache<string, TimestampLog>({ max: MAX_BUCKETS, ttl: WINDOW_MS });
  return {
    synchronous: true,
    hit(bucket, limit, now) {
      let log = buckets.get(bucket);
      if (!log) {
        log = new TimestampLog();
        buckets.set(bucket, log);
      }
      log.prune(now);
      const decision = decide(limit, now, log.length, log.oldest());
      if (decision.allowed) {
        log.push(now);
      }
      return decision;
    },
    close: async () => {},
  };
}

/** Prune, count, add if room, and report the oldest entry: one atomic step per request. */
const SLIDING_WINDOW_SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
end
redis.call('PEXPIRE', key, window)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {count, oldest[2] or ''}
`;

interface SlidingWindowRedis extends Redis {
  slidingWindow(
    key: string,
    now: number,
    limit: number,
    window: number,
    member: string,
  ): Promise<[number, string]>;
}

const KEY_PREFIX = 'haven:rl:';

export function createRedisStore(redisUrl: string, log: FastifyBaseLogger): RateLimitStore {
  const redis = new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 250,
  }) as SlidingWindowRedis;
  redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
  const fallback = createMemoryStore();
  const instance = randomUUID();
  let sequence = 0;
  let degraded = false;

  const degrade = (error: Error) => {
    if (!degraded) {
      degraded = true;
      log.warn({ err: error }, 'redis unavailable: rate limits fall back to this process');
    }
  };
  redis.on('error', degrade);
  redis.on('ready', () => {
    if (degraded) {
      degraded = false;
      log.info('redis available again: rate limits are shared again');
    }
  });

  return {
    synchronous: false,
    async hit(bucket, limit, now) {
      if (degraded || redis.status !== 'ready') {
        return fallback.hit(bucket, limit, now);
      }
      try {
        sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
        const [count, oldest] = await redis.slidingWindow(
          KEY_PREFIX + bucket,
          now,
          limit,
          WINDOW_MS,
          `${now}:${instance}:${sequence}`,
        );
        const oldestAt = oldest === '' ? now : Number(oldest);
        return decide(limit, now, Number(count), oldestAt);
      } catch (error) {
        degrade(error as Error);
        return fallback.hit(bucket, limit, now);
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}
