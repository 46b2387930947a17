// The idle database load (docs/decisions.md "Idle load and flat with data"): transactions per
// second a Haven process causes in its database while nothing is asked of it (job workers,
// batched writers, pings included). Read from pg_stat_database over a connection to another
// database (the server's admin one), so the measuring is not counted. The statistics lag: a
// backend flushes its counts at most once a second, and one that goes idle with counts pending
// flushes them only ~10 s later (PostgreSQL 15's PGSTAT_IDLE_INTERVAL; seen here: 10 queries
// counted 10 s after they ran). So the caller lets startup's counts land before the first
// reading, and the window is long enough that what is pending at either end (about the same in
// a steady idle) blurs little.
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';

async function transactions(client: pg.Client, database: string) {
  // A fresh statistics snapshot, not one cached earlier in this session.
  await client.query('select pg_stat_clear_snapshot()');
  const result = await client.query(
    'select xact_commit + xact_rollback as n from pg_stat_database where datname = $1',
    [database],
  );
  return { count: Number(result.rows[0]?.n ?? Number.NaN), at: performance.now() };
}

/** Transactions per second in `database` over `seconds`, read through `adminUrl`. */
export async function idleTransactionsPerSecond(
  adminUrl: string,
  database: string,
  seconds: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const first = await transactions(client, database);
    await delay(seconds * 1000);
    const last = await transactions(client, database);
    return (last.count - first.count) / ((last.at - first.at) / 1000);
  } finally {
    await client.end();
  }
}
