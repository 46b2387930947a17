// Server-side prepared statements for the few fixed texts sent on every request (those of
// db/reused-statement.ts, and a new family's quick setup statement). An unnamed statement is parsed,
// analysed and planned by PostgreSQL every time it runs; a named one is parsed once per
// connection and its plan reused, which on the children read took ~100 µs of PostgreSQL's
// CPU off every read (measured with `pg` alone; decisions: "Prepared statements for the hot reads"). On a
// 2-core machine PostgreSQL and Node share the CPU, so that is throughput.
//
// What keeps this safe:
// - Only registered texts are named, so a connection prepares a bounded set (`pg` keeps a
//   prepared name for the connection's life).
// - Only outside a transaction. A prepared `select *` fails with "cached plan must not
//   change result type" (0A000) once a migration elsewhere (another instance, during a
//   rolling deploy) changes a table it reads, and any prepared statement fails with "does
//   not exist" (26000) if its session lost it; outside a transaction either is recoverable:
//   the text gets a new name (prepared afresh, on this and every other connection) and the
//   statement runs again. Inside one it would abort the transaction, so there statements
//   stay unnamed, as before.
// - PGlite is not wrapped: it has no pool of connections to prepare on, and its statements
//   cost no round trip.
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * PostgreSQL's SQLSTATEs for a prepared statement that can no longer run as prepared:
 * "cached plan must not change result type" (a migration changed what it reads), and
 * "prepared statement does not exist" (the session lost it: `DEALLOCATE`/`DISCARD ALL`, or
 * a pooler in front of PostgreSQL that hands statements to other sessions).
 */
const STALE_PREPARED = new Set(['0A000', '26000']);

interface Named {
  /** `haven_N`: the statement's name until its first rename. */
  base: string;
  /** Bumped when a prepared plan went stale: the next name is a new statement. */
  generation: number;
}

/** A new generation is a new name, so PostgreSQL prepares the text afresh. */
function nameOf(named: Named): string {
  return named.generation === 0 ? named.base : `${named.base}_g${named.generation}`;
}

const registered = new Map<string, Named>();

/**
 * At most this many texts are ever named: each costs a little memory on every connection
 * that runs it, for the connection's life. The registered texts are fixed ones, a few dozen;
 * the cap holds whatever a future caller registers.
 */
const MOST_NAMED = 200;

/**
 * A text whose prepared statement went stale more often than this runs unnamed from then
 * on: migrations are rare, so that many means something keeps losing them (a pooler handing
 * statements between sessions), and each rename would leave one more statement behind in
 * PostgreSQL's sessions.
 */
const MOST_RENAMES = 3;

/** Names `text` wherever the pool below runs it outside a transaction. */
export function registerPrepared(text: string): void {
  if (!registered.has(text) && registered.size < MOST_NAMED) {
    registered.set(text, { base: `haven_${registered.size + 1}`, generation: 0 });
  }
}

function isStalePrepared(error: unknown): boolean {
  return STALE_PREPARED.has((error as { code?: string })?.code ?? '');
}

/**
 * Kysely's transaction statements are short (`begin`, `start transaction isolation level
 * …`, `commit`, `rollback`): longer texts, every read and write, are not looked into.
 */
const LONGEST_TRANSACTION_STATEMENT = 64;

/** Statements that open and close a transaction, as Kysely sends them. */
function transactionEffect(text: string): 'begin' | 'end' | undefined {
  if (text.length > LONGEST_TRANSACTION_STATEMENT) {
    return undefined;
  }
  const head = text.slice(0, 16).trimStart().toLowerCase();
  if (head.startsWith('begin') || head.startsWith('start transaction')) {
    return 'begin';
  }
  if (head.startsWith('commit') || head.startsWith('rollback')) {
    return head.startsWith('rollback to') ? undefined : 'end';
  }
  return undefined;
}

/** A query as `pg` takes it: unnamed (text and values), or a named prepared statement. */
export type QueryConfig = { text: string; values: unknown[]; name?: string };

/** An unregistered text, or one renamed too often, runs unnamed and is never sent again. */
const NO_RETRY = () => undefined;

/**
 * For a caller that runs statements itself (db/direct-reads.ts): how to send `text` now,
 * and, should that fail, how to send it again (undefined: pass the error on). Same naming
 * and renaming as `runPrepared`.
 */
export function preparedAttempt(
  text: string,
  values: unknown[],
): { config: QueryConfig; retry(error: unknown): QueryConfig | undefined } {
  const named = registered.get(text);
  if (!named || named.generation > MOST_RENAMES) {
    return { config: { text, values }, retry: NO_RETRY };
  }
  const generation = named.generation;
  return {
    config: { name: nameOf(named), text, values },
    retry(error) {
      if (!isStalePrepared(error)) {
        return undefined;
      }
      // Another request may have renamed it already; rename once per stale generation.
      if (named.generation === generation) {
        named.generation += 1;
      }
      return named.generation > MOST_RENAMES
        ? { text, values }
        : { name: nameOf(named), text, values };
    },
  };
}

/**
 * Runs `text` through `query`: as its named statement when registered, else unnamed. A stale
 * statement (a migration elsewhere, a lost session) is renamed, so PostgreSQL prepares it
 * afresh, and run again: unnamed once it went stale more than MOST_RENAMES times.
 */
export async function runPrepared<R>(
  query: (config: QueryConfig) => Promise<R>,
  text: string,
  values: unknown[],
): Promise<R> {
  const attempt = preparedAttempt(text, values);
  try {
    return await query(attempt.config);
  } catch (error) {
    const again = attempt.retry(error);
    if (!again) {
      throw error;
    }
    return query(again);
  }
}

/** One pooled connection as Kysely uses it, naming registered texts. */
class PreparingClient implements PostgresPoolClient {
  #client: pg.PoolClient;
  #inTransaction = false;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's overloads (text + values, or a cursor)
  query(text: any, values?: ReadonlyArray<unknown>): any {
    if (typeof text !== 'string') {
      return this.#client.query(text);
    }
    const effect = transactionEffect(text);
    if (effect) {
      this.#inTransaction = effect === 'begin';
    }
    if (this.#inTransaction) {
      return this.#client.query(text, values as unknown[]);
    }
    return runPrepared((config) => this.#client.query(config), text, values as unknown[]);
  }

  release(): void {
    // A connection handed back mid-transaction (an error path) starts clean for the next.
    this.#inTransaction = false;
    this.#client.release();
  }
}

/** `pool` as Kysely's PostgresDialect takes it, preparing registered texts. */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PreparingClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let preparing = clients.get(client);
      if (!preparing) {
        preparing = new PreparingClient(client);
        clients.set(client, preparing);
      }
      return preparing;
    },
    end: () => pool.end(),
  };
}
