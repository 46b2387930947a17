// Cross-instance cache invalidation. Every instance keeps short-lived caches (verified keys,
// tokens); when one instance changes the truth (a revocation), all must drop their copy.
// With REDIS_URL the message goes through Redis pub/sub; without it, this process is the
// only instance. Local subscribers always hear a publish at once, even if Redis is down.

import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { afterCommit, currentRequestTransaction } from '../db/request-transaction.js';

export type InvalidationHandler = (message: string) => void;

export interface InvalidationBus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: InvalidationHandler): void;
  close(): Promise<void>;
}

const CHANNEL_PREFIX = 'haven:invalidate:';

/**
 * Invalidations are sent once the change they tell of is committed: sent from inside a
 * request transaction (db/request-transaction.ts), another instance would re-read the old
 * rows at once and keep them. A rolled-back change sends none.
 */
export function createInvalidationBus(options: {
  redisUrl: string | undefined;
  log: FastifyBaseLogger;
}): InvalidationBus {
  const bus = createImmediateBus(options);
  return {
    ...bus,
    publish(channel, message) {
      if (currentRequestTransaction()) {
        afterCommit(() => bus.publish(channel, message));
        return Promise.resolve();
      }
      return bus.publish(channel, message);
    },
  };
}

function createImmediateBus(options: {
  redisUrl: string | undefined;
  log: FastifyBaseLogger;
}): InvalidationBus {
  const handlers = new Map<string, Set<InvalidationHandler>>();
  const deliver = (channel: string, message: string) => {
    for (const handler of handlers.get(channel) ?? []) {
      handler(message);
    }
  };

  if (!options.redisUrl) {
    return {
      publish: async (channel, message) => deliver(channel, message),
      subscribe: (channel, handler) => {
        handlers.set(channel, (handlers.get(channel) ?? new Set()).add(handler));
      },
      close: async () => {},
    };
  }

  // Commands fail fast while Redis is away instead of queueing: a lost invalidation is
  // bounded by the caches' own short TTLs.
  const redisOptions = { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 1 };
  const publisher = new Redis(options.redisUrl, redisOptions);
  const subscriber = new Redis(options.redisUrl, { ...redisOptions, enableOfflineQueue: true });
  let warned = false;
  const warnOnce = (error: Error) => {
    if (!warned) {
      warned = true;
      options.log.warn({ err: error }, 'redis unavailable: invalidations stay in this process');
    }
  };
  for (const client of [publisher, subscriber]) {
    client.on('error', warnOnce);
    // Back only when both connections are: the publisher to send, and the subscriber (which
    // ioredis re-subscribes on reconnect, autoResubscribe) to hear the other instances.
    client.on('ready', () => {
      if (warned && publisher.status === 'ready' && subscriber.status === 'ready') {
        warned = false;
        options.log.info('redis available again');
      }
    });
  }
  subscriber.on('message', (fullChannel: string, message: string) => {
    deliver(fullChannel.slice(CHANNEL_PREFIX.length), message);
  });

  return {
    async publish(channel, message) {
      deliver(channel, message);
      try {
        await publisher.publish(CHANNEL_PREFIX + channel, message);
      } catch (error) {
        warnOnce(error as Error);
      }
    },
    subscribe(channel, handler) {
      if (!handlers.has(channel)) {
        subscriber.subscribe(CHANNEL_PREFIX + channel).catch(warnOnce);
      }
      handlers.set(channel, (handlers.get(channel) ?? new Set()).add(handler));
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
