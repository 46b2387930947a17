// Whether Redis answers, for the readiness probe: a connection of its own, so the answer
// says whether Redis takes commands, not whether some other client (the rate limits, the
// invalidation bus) happens to be between reconnects. It never queues a command while
// disconnected (a probe must fail at once, not wait for a reconnect) and says nothing in
// the log: the clients that use Redis report its absence themselves.
import { Redis } from 'ioredis';

export interface RedisPing {
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function createRedisPing(redisUrl: string): RedisPing {
  const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  // Without a listener ioredis prints every connection error; reconnecting is its own.
  redis.on('error', () => {});
  return {
    async ping(timeoutMs) {
      if (redis.status !== 'ready') {
        throw new Error(`redis ${redis.status}`);
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('redis ping timed out')), timeoutMs);
      });
      try {
        await Promise.race([redis.ping(), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}
