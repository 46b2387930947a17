// One Kysely database over PostgreSQL (DATABASE_URL) or embedded PGlite (DATA_DIR).
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type KyselyConfig, sql } from 'kysely';
import pg from 'pg';
import type { PoolState } from '../telemetry/metrics.js';
import { readDirectly } from './direct-reads.js';
import {
  type DatabaseNotifications,
  pgliteNotifications,
  postgresNotifications,
} from './notifications.js';
import { PGlitePool } from './pglite-pool.js';
import { preparingPool } from './prepared-statements.js';
import { RequestScopedPostgresDialect, withRequestTransactions } from './request-transaction.js';
import type { Database } from './schema.js';
import { postgresParsers } from './timestamp-parser.js';

export type Db = Kysely<Database>;
export type Backend = 'postgres' | 'pglite';

export interface DatabaseHandle {
  db: Db;
  backend: Backend;
  /** Resolves when the database answers `select 1` within the timeout, rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** LISTEN/NOTIFY on this database (on PostgreSQL, a connection opened on first listen). */
  notifications: DatabaseNotifications;
  /**
   * The pool's connections now (the `haven_db_pool_connections` gauge): idle, busy, and
   * checkouts waiting for one. Read from the pool's own counters, no statement sent; the
   * LISTEN connection is not the pool's and is not counted.
   */
  poolState(): PoolState;
  close(): Promise<void>;
}

const INT8 = 20;
const DATE = 1082;

/**
 * Both drivers must hand the code the same JS values. Counts (int8) become numbers on both
 * (pg would give strings, PGlite bigints); calendar dates stay 'YYYY-MM-DD' strings rather
 * than Dates at local midnight.
 */
const sharedParsers: Record<number, (value: string) => unknown> = {
  [INT8]: (value) => Number(value),
  [DATE]: (value) => value,
};

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `endPool` runs after Kysely's own destroy, which does nothing when no query ever ran:
 * the pool must be ended either way, or a closed handle would keep answering.
 */
function handleFor(
  db: Db,
  backend: Backend,
  notifications: DatabaseNotifications,
  poolState: () => PoolState,
  endPool: () => Promise<void>,
): DatabaseHandle {
  let closed: Promise<void> | undefined;
  return {
    db,
    backend,
    notifications,
    poolState,
    ping: async (timeoutMs) => {
      await withTimeout(sql`select 1`.execute(db), timeoutMs);
    },
    close: () => {
      closed ??= notifications
        .close()
        .then(() => db.destroy())
        .then(endPool);
      return closed;
    },
  };
}

export interface PostgresOptions {
  /** Called for errors of idle pooled connections (the server went away between queries). */
  onIdleError?: (error: Error) => void;
  /** Kysely's statement log: sees every statement sent, `begin` and `commit` included. */
  log?: KyselyConfig['log'];
}

export function connectPostgres(connectionString: string, options: PostgresOptions = {}) {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // Fail fast when the server is gone instead of queueing requests forever.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    query_timeout: 30_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        sharedParsers[oid] ??
        (format === 'binary' ? undefined : postgresParsers[oid]) ??
        pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
    },
  });
  const onError = (error: Error) => options.onIdleError?.(error);
  pool.on('error', onError);
  // A connection that dies outside a query (mid-handshake, or checked out between two
  // queries) emits 'error' on its client; unheard, that would crash the process.
  pool.on('connect', (client) => client.on('error', onError));
  const dialect = new RequestScopedPostgresDialect({ pool: preparingPool(pool) });
  const db = withRequestTransactions(new Kysely<Database>({ dialect, log: options.log }), dialect);
  readDirectly(db, pool, options.log);
  const notifications = postgresNotifications(connectionString, { onLost: onError });
  const poolState = (): PoolState => ({
    idle: pool.idleCount,
    busy: pool.totalCount - pool.idleCount,
    waiting: pool.waitingCount,
  });
  return handleFor(db, 'postgres', notifications, poolState, async () => {
    if (!pool.ended) {
      await pool.end();
    }
  });
}

/** Wraps an already created PGlite (tests hand in clones of a migrated template). */
export function wrapPGlite(
  pglite: PGlite,
  options: Pick<PostgresOptions, 'log'> = {},
): DatabaseHandle {
  const pool = new PGlitePool(pglite);
  const dialect = new RequestScopedPostgresDialect({ pool });
  const db = withRequestTransactions(new Kysely<Database>({ dialect, log: options.log }), dialect);
  const notifications = pgliteNotifications(pglite, (run) => pool.exclusively(run));
  return handleFor(
    db,
    'pglite',
    notifications,
    () => pool.state(),
    () => pool.end(),
  );
}

export async function openPGlite(dataDir: string): Promise<DatabaseHandle> {
  const options = { parsers: sharedParsers };
  const pglite =
    dataDir === 'memory' ? await PGlite.create(options) : await PGlite.create(dataDir, options);
  return wrapPGlite(pglite);
}

export const pgliteParsers = sharedParsers;

export interface ConnectOptions extends PostgresOptions {
  databaseUrl: string | undefined;
  dataDir: string;
}

export async function connectDatabase(options: ConnectOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    return connectPostgres(options.databaseUrl, options);
  }
  return openPGlite(options.dataDir);
}
