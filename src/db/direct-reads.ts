// The hot reads (db/reused-statement.ts) on PostgreSQL go to `pg`'s pool directly instead of
// through Kysely's executor. Kysely's path for one statement is five promises deep
// (executor, connection provider, driver, connection, the prepared-statement wrapper) and
// checks the pool out and in through its own objects: on the children read that was ~5 µs
// of a ~65 µs request on the bench VM (`npm run bench`; docs/decisions.md "Hot reads straight
// to the pool"). Here a read is one checkout, one query and one release, in callbacks, with
// the same naming of prepared statements (db/prepared-statements.ts).
//
// Only the database handle itself reads this way: a transaction (and a connection pinned
// with `db.connection()`) is another Kysely object and keeps Kysely's path, where statements
// stay unnamed inside transactions. The statement log Kysely would have written (tests count
// round trips with it) is written here too.
import { CompiledQuery, type LogConfig, type Logger } from 'kysely';
import pg from 'pg';
import type { Db } from './connect.js';
import { preparedAttempt, type QueryConfig } from './prepared-statements.js';
import { type RowShapes, ShapedResult } from './row-shapes.js';

type QueryCallback = (error: Error | undefined, result: pg.QueryResult) => void;

/** What of `pg`'s Query a direct read sets: its name, and the result it fills. */
interface QueryInternals {
  name?: string;
  _result: unknown;
  _results: unknown;
}

/**
 * Runs one statement and answers its rows: its text and values as compiled, not a Kysely
 * `CompiledQuery` (building one freezes it, for nothing on this path).
 */
export type DirectRead = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;

const directReads = new WeakMap<Db, DirectRead>();

/** The direct path of `db`, if it has one (a PostgreSQL handle's root database). */
export function directReadOf(db: Db): DirectRead | undefined {
  return directReads.get(db);
}

/**
 * A query as `pg` runs it, built from its text (a config object would be copied property by
 * property, descriptors and all, on every call: ~3 % of the children read's CPU) and named
 * afterwards when it is a prepared statement.
 */
function queryOf(shapes: RowShapes, config: QueryConfig, callback: QueryCallback): pg.Query {
  const query = new pg.Query(config.text, config.values, callback) as pg.Query & QueryInternals;
  if (config.name) {
    query.name = config.name;
  }
  // The statement's columns are known from its last read (db/row-shapes.ts).
  query._result = new ShapedResult(shapes, config.text);
  query._results = query._result;
  return query;
}

/**
 * One checkout, one query, one release, in callbacks and one promise: every promise more on
 * this path is another turn of the microtask queue per read. The connection goes back to
 * the pool even when the statement failed (a failed statement leaves it usable, as on
 * Kysely's path; `pg`'s own `pool.query` would close it), unless `pg` found it broken. A
 * stale prepared statement is sent again as `preparedAttempt` says, on the same connection.
 */
function readOnPool(
  pool: pg.Pool,
  shapes: RowShapes,
  sql: string,
  parameters: readonly unknown[],
): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    pool.connect((connectError, client, release) => {
      if (connectError || !client) {
        reject(connectError);
        return;
      }
      const attempt = preparedAttempt(sql, parameters as unknown[]);
      const answered: QueryCallback = (error, result) => {
        const again = error ? attempt.retry(error) : undefined;
        if (again) {
          client.query(
            queryOf(shapes, again, (retryError, retried) => {
              release();
              retryError ? reject(retryError) : resolve(retried.rows);
            }),
          );
          return;
        }
        release();
        error ? reject(error) : resolve(result.rows);
      };
      client.query(queryOf(shapes, attempt.config, answered));
    });
  });
}

/** The same read, written to a statement log as Kysely writes it. */
async function loggedRead(
  pool: pg.Pool,
  shapes: RowShapes,
  sql: string,
  parameters: readonly unknown[],
  log: Logger,
): Promise<unknown[]> {
  const query = CompiledQuery.raw(sql, [...parameters]);
  const started = performance.now();
  try {
    const rows = await readOnPool(pool, shapes, sql, parameters);
    await log({ level: 'query', query, queryDurationMillis: performance.now() - started });
    return rows;
  } catch (error) {
    await log({ level: 'error', error, query, queryDurationMillis: performance.now() - started });
    throw error;
  }
}

/**
 * Gives `db` (built on `pool`) the direct path. With a statement log that is not a function
 * (Kysely's list of levels, which logs to the console its own way) it keeps Kysely's path.
 */
export function readDirectly(db: Db, pool: pg.Pool, log: LogConfig | undefined): void {
  const shapes: RowShapes = new Map();
  if (log === undefined) {
    directReads.set(db, (sql, parameters) => readOnPool(pool, shapes, sql, parameters));
  } else if (typeof log === 'function') {
    directReads.set(db, (sql, parameters) => loggedRead(pool, shapes, sql, parameters, log));
  }
}
