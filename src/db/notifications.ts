// Change notifications from the database (LISTEN/NOTIFY), so that work waiting on a change
// (a queued job, a new trust-list issue) wakes when the change commits instead of polling.
// A NOTIFY is sent by the writing transaction itself (triggers), so every writer, in any
// process, is heard by every listening process, and only once the change is visible.
//
// On PostgreSQL one dedicated connection per process listens (pooled connections cannot:
// LISTEN belongs to a session). It reconnects with backoff; messages sent while it is down
// are lost, so listeners are told to catch up (`onResync`) once it is back. On embedded
// PGlite the one session listens through PGlite's own API.
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface DatabaseNotifications {
  /**
   * Calls `onMessage` with each payload sent on `channel` from now on. `onResync` runs after
   * an outage of the listening connection, when messages may have been missed. Resolves once
   * listening, or once a first attempt failed (reconnecting goes on in the background).
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onResync?: () => void,
  ): Promise<void>;
  /** False while the listening connection is down (messages are being missed). */
  readonly listening: boolean;
  close(): Promise<void>;
}

interface Subscription {
  onMessage: (payload: string) => void;
  onResync?: () => void;
}

function subscriptions() {
  const byChannel = new Map<string, Subscription[]>();
  return {
    byChannel,
    add(channel: string, subscription: Subscription): boolean {
      const known = byChannel.get(channel);
      byChannel.set(channel, [...(known ?? []), subscription]);
      return known === undefined;
    },
    deliver(channel: string, payload: string): void {
      for (const { onMessage } of byChannel.get(channel) ?? []) {
        onMessage(payload);
      }
    },
    resync(): void {
      for (const list of byChannel.values()) {
        for (const { onResync } of list) {
          onResync?.();
        }
      }
    },
  };
}

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export function postgresNotifications(
  connectionString: string,
  options: {
    /** Called once per outage of the listening connection (not on every failed retry). */
    onLost?: (error: Error) => void;
  } = {},
): DatabaseNotifications {
  const subs = subscriptions();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let listening = false;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retryTimer: NodeJS.Timeout | undefined;
  let lostReported = false;

  const listenSql = (channel: string) => `listen ${pg.escapeIdentifier(channel)}`;

  function lost(error: Error, failed: pg.Client): void {
    if (client !== failed) {
      return;
    }
    client = undefined;
    listening = false;
    failed.removeAllListeners('notification');
    failed.end().catch(() => {});
    if (!lostReported) {
      lostReported = true;
      options.onLost?.(error);
    }
    scheduleRetry();
  }

  function scheduleRetry(): void {
    if (closed || retryTimer) {
      return;
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  }

  async function open(): Promise<void> {
    const next = new pg.Client({
      connectionString,
      connectionTimeoutMillis: 5_000,
      // A connection cut without a FIN (a dead peer) is noticed instead of waited on forever.
      keepAlive: true,
    });
    next.on('error', (error) => lost(error, next));
    next.on('end', () => lost(new Error('the listening connection ended'), next));
    next.on('notification', (message) => subs.deliver(message.channel, message.payload ?? ''));
    client = next;
    try {
      await next.connect();
      for (const channel of subs.byChannel.keys()) {
        await next.query(listenSql(channel));
      }
    } catch (error) {
      lost(error as Error, next);
      return;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    const wasDown = lostReported;
    listening = true;
    lostReported = false;
    retryMs = FIRST_RETRY_MS;
    if (wasDown) {
      subs.resync();
    }
  }

  function connect(): Promise<void> {
    connecting ??= open().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  return {
    get listening() {
      return listening;
    },

    async listen(channel, onMessage, onResync) {
      const isNew = subs.add(channel, { onMessage, onResync });
      if (connecting) {
        await connecting;
      }
      if (!client) {
        // First use (the connection is opened lazily), or down: open() listens to all.
        await connect();
        return;
      }
      if (isNew && listening) {
        await client.query(listenSql(channel)).catch((error: Error) => {
          if (client) {
            lost(error, client);
          }
        });
      }
    },

    async close() {
      closed = true;
      clearTimeout(retryTimer);
      await connecting;
      const last = client;
      client = undefined;
      listening = false;
      await last?.end().catch(() => {});
    },
  };
}

/**
 * PGlite is one session in this process: LISTEN is run between two checkouts of the pool
 * (never inside another caller's transaction), and messages arrive with the COMMIT that sent
 * them. There is no connection to lose.
 */
export function pgliteNotifications(
  pglite: PGlite,
  checkout: <T>(run: () => Promise<T>) => Promise<T>,
): DatabaseNotifications {
  const subs = subscriptions();
  const unlisten: Array<() => Promise<void>> = [];
  let closed = false;
  return {
    listening: true,
    async listen(channel, onMessage, onResync) {
      if (subs.add(channel, { onMessage, onResync }) && !closed) {
        unlisten.push(
          await checkout(() => pglite.listen(channel, (payload) => subs.deliver(channel, payload))),
        );
      }
    },
    async close() {
      closed = true;
      // The database closes right after; stop delivering without running statements.
      subs.byChannel.clear();
      unlisten.length = 0;
    },
  };
}
