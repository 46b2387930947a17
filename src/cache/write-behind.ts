// Values gathered in memory and written to the database in batches (usage counts, last-seen
// stamps), so that the request path costs no write. A batch is written on a timer, at once
// when `flushAt` ids are waiting, and on close. It is bounded: while the database refuses
// writes, the batch is kept and merged with what arrives, but at most `maxEntries` distinct
// new ids are taken in (so at most twice that is ever held); a new id past the bound is
// dropped and the count reported once the database is back, so a long outage or a flood of
// distinct ids cannot exhaust memory. Ids already held keep merging, losing nothing.
import type { FastifyBaseLogger } from 'fastify';

export interface WriteBehindOptions<V> {
  /** Names the batch in log lines. */
  what: string;
  everyMs: number;
  flushAt: number;
  maxEntries: number;
  /** Folds a newer value for an id into the one held. */
  merge(older: V, newer: V): V;
  write(batch: ReadonlyMap<string, V>): Promise<void>;
  log: FastifyBaseLogger;
}

export interface WriteBehind<V> {
  add(id: string, value: V): void;
  /**
   * The value held for `id` now, if any, for a caller that folds a newer one into it in
   * place instead of building a value to merge (no allocation on a hot path). What a flush
   * under way is writing is no longer held, so it is never changed under the write.
   */
  held(id: string): V | undefined;
  delete(id: string): void;
  /** Writes what is held now; flushes never overlap. */
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly size: number;
}

export function createWriteBehind<V>(options: WriteBehindOptions<V>): WriteBehind<V> {
  let held = new Map<string, V>();
  let flushing: Promise<void> = Promise.resolve();
  // No early flush while one is under way or after one failed: the timer retries, so a
  // flood of ids cannot turn a database outage into a retry loop.
  let holdEarlyFlushes = false;
  let dropped = 0;

  async function writeHeld(): Promise<void> {
    if (held.size === 0) {
      return;
    }
    const batch = held;
    held = new Map();
    holdEarlyFlushes = true;
    try {
      await options.write(batch);
      holdEarlyFlushes = false;
      if (dropped > 0) {
        options.log.warn({ dropped }, `${options.what}: writing again; ids dropped meanwhile`);
        dropped = 0;
      }
    } catch (error) {
      for (const [id, older] of batch) {
        const newer = held.get(id);
        held.set(id, newer === undefined ? older : options.merge(older, newer));
      }
      options.log.warn({ err: error }, `${options.what}: write failed; kept for the next flush`);
    }
  }

  function flush(): Promise<void> {
    flushing = flushing.then(writeHeld);
    return flushing;
  }

  const timer = setInterval(() => void flush(), options.everyMs).unref();

  return {
    add(id, value) {
      const known = held.get(id);
      if (known !== undefined) {
        held.set(id, options.merge(known, value));
        return;
      }
      if (held.size >= options.maxEntries) {
        if (dropped++ === 0) {
          options.log.warn(
            `${options.what}: bound reached; new ids dropped until a write succeeds`,
          );
        }
        return;
      }
      held.set(id, value);
      if (held.size >= options.flushAt && !holdEarlyFlushes) {
        holdEarlyFlushes = true;
        void flush();
      }
    },
    held(id) {
      return held.get(id);
    },
    delete(id) {
      held.delete(id);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
    get size() {
      return held.size;
    },
  };
}

/** The merge of last-seen stamps: the later one wins. */
export function laterDate(older: Date, newer: Date): Date {
  return newer > older ? newer : older;
}
