// A `pg`-shaped pool over one embedded PGlite instance, so Kysely's PostgresDialect runs
// unchanged on both backends. PGlite is a single connection: checkouts are served one at
// a time, in order, and a transaction keeps its checkout until it ends.
import type { PGlite } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type { PoolState } from '../telemetry/metrics.js';

type QueryResult = PostgresQueryResult<unknown>;

/** First-come, first-served lock: PGlite must never see two sessions' statements interleave. */
class CheckoutQueue {
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  acquire(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Whether a checkout is held, and how many wait for it. */
  state(): { busy: boolean; waiting: number } {
    return { busy: this.busy, waiting: this.waiting.length };
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) {
      next();
    } else {
      this.busy = false;
    }
  }
}

function toResult(result: {
  rows: unknown[];
  command?: string;
  affectedRows?: number;
}): QueryResult {
  return {
    command: (result.command ?? 'SELECT') as QueryResult['command'],
    rowCount: result.affectedRows ?? result.rows.length,
    rows: result.rows,
  };
}

async function runStatement(
  pglite: PGlite,
  text: string,
  parameters: readonly unknown[],
): Promise<QueryResult> {
  if (parameters.length > 0) {
    return toResult(await pglite.query(text, [...parameters]));
  }
  // Without parameters the simple protocol is used, like `pg` does: it accepts
  // several statements in one text (migrations) and answers with the last result.
  const results = await pglite.exec(text);
  const last = results.at(-1);
  return last ? toResult(last) : { command: 'SELECT', rowCount: 0, rows: [] };
}

export class PGlitePool implements PostgresPool {
  private readonly queue = new CheckoutQueue();
  private ended = false;

  constructor(readonly pglite: PGlite) {}

  async connect(): Promise<PostgresPoolClient> {
    if (this.ended) {
      throw new Error('the embedded database is closed');
    }
    await this.queue.acquire();
    let released = false;
    const client = {
      query: (text: string, parameters: readonly unknown[]) =>
        runStatement(this.pglite, text, parameters),
      release: () => {
        if (!released) {
          released = true;
          this.queue.release();
        }
      },
    };
    return client as unknown as PostgresPoolClient;
  }

  /** The one connection, idle or busy, and the checkouts waiting for it (the pool gauge). */
  state(): PoolState {
    if (this.ended) {
      return { idle: 0, busy: 0, waiting: 0 };
    }
    const { busy, waiting } = this.queue.state();
    return { idle: busy ? 0 : 1, busy: busy ? 1 : 0, waiting };
  }

  /** Runs `run` while no other checkout is held (PGlite calls outside Kysely, e.g. LISTEN). */
  async exclusively<T>(run: () => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      return await run();
    } finally {
      client.release();
    }
  }

  async end(): Promise<void> {
    if (this.ended) {
      return;
    }
    this.ended = true;
    // Wait for the checkout in progress, so a flush on shutdown is not cut off.
    await this.queue.acquire();
    await this.pglite.close();
    this.queue.release();
  }
}
