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
    const named = this.#inTransaction ? undefined : registered.get(text);
    if (!named || named.generation > MOST_RENAMES) {
      return this.#client.query(text, values as unknown[]);
    }
    return this.#named(text, named, values as unknown[]);
  }

  async #named(text: string, named: Named, values: unknown[]) {
    const generation = named.generation;
    try {
      return await this.#client.query({ name: nameOf(named), text, values });
    } catch (error) {
      if (!isStalePrepared(error)) {
        throw error;
      }
      // Another request may have renamed it already; rename once per stale generation.
      if (named.generation === generation) {
        named.generation += 1;
      }
      if (named.generation > MOST_RENAMES) {
        return this.#client.query(text, values);
      }
      return this.#client.query({ name: nameOf(named), text, values });
    }
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
