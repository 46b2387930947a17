// Installs (or upgrades) pg-boss's own schema and creates Haven's queues. Run by the migration
// step, after Haven's SQL migrations, so `npm run migrate` prepares everything and a test
// template database already holds it.
import { createRequire } from 'node:module';
import { type Kysely, sql } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database } from '../db/schema.js';
import { bossDatabase } from './boss-database.js';
import { QUEUE_SETTINGS, QUEUES } from './queues.js';

export const JOBS_SCHEMA = 'pgboss';

/**
 * The channel a job's transaction notifies when the job becomes waiting (queued, or put back
 * for a retry): payload `<queue> <ms until due>`, so every listening process wakes its
 * workers when the job commits, or sets a timer for when it falls due.
 */
export const JOBS_CHANNEL = 'haven_jobs';
const NOTIFY_TRIGGER = 'haven_job_notify';
/** pg-boss's active jobs, which the reaper (reaper.ts) reads every few seconds. */
const ACTIVE_INDEX = 'haven_job_active';

/** Any fixed number: the same in every Haven process. */
const INSTALL_LOCK_ID = 7_403_222;

/** The schema version this pg-boss installs (what its own installer compares against). */
const BOSS_SCHEMA_VERSION = (
  createRequire(import.meta.url)('pg-boss/version.json') as { schema: number }
).schema;

/**
 * Already installed at this version, with every queue at its current settings, the trigger
 * and the index: nothing to do. Two reads instead of starting pg-boss, which every server
 * start, operator command and test database paid.
 */
async function isCurrent(db: Kysely<Database>): Promise<boolean> {
  const installed = await sql<{ table: string | null }>`
    select to_regclass(${`${JOBS_SCHEMA}.version`}) as table`.execute(db);
  if (!installed.rows[0]?.table) {
    return false;
  }
  const names = Object.values(QUEUES);
  const settings = sql.join(
    names.map((name) => {
      const { retryLimit, retryDelay, retryBackoff, expireInSeconds } = QUEUE_SETTINGS[name];
      return sql`(${name}, ${retryLimit}::int, ${retryDelay}::int, ${retryBackoff}::bool,
        ${expireInSeconds}::int)`;
    }),
  );
  const state = await sql<{
    version: number;
    queues: number;
    notifies: boolean;
    indexed: boolean;
  }>`
    select (select version from ${sql.table(`${JOBS_SCHEMA}.version`)}) as version,
      (select count(*) from ${sql.table(`${JOBS_SCHEMA}.queue`)}
        join (values ${settings})
          as wanted (name, retry_limit, retry_delay, retry_backoff, expire_seconds)
          using (name, retry_limit, retry_delay, retry_backoff, expire_seconds)) as queues,
      exists (select 1 from pg_trigger where tgname = ${NOTIFY_TRIGGER}
        and tgrelid = ${`${JOBS_SCHEMA}.job`}::regclass) as notifies,
      to_regclass(${`${JOBS_SCHEMA}.${ACTIVE_INDEX}`}) is not null as indexed`.execute(db);
  const row = state.rows[0];
  return (
    Number(row?.version) === BOSS_SCHEMA_VERSION &&
    Number(row?.queues) === names.length &&
    row?.notifies === true &&
    row?.indexed === true
  );
}

export async function installJobSchema(db: Kysely<Database>): Promise<void> {
  if (await isCurrent(db)) {
    return;
  }
  // pg-boss's own installer races when two processes start on a fresh database at once
  // (both create its schema). One connection holds a session lock around the whole install;
  // pg-boss runs on that same connection, which on PGlite is also the only one.
  await db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${INSTALL_LOCK_ID})`.execute(connection);
    try {
      await installOn(connection);
    } finally {
      await sql`select pg_advisory_unlock(${INSTALL_LOCK_ID})`.execute(connection);
    }
  });
}

async function installOn(db: Kysely<Database>): Promise<void> {
  const boss = new PgBoss({
    db: bossDatabase(db),
    schema: JOBS_SCHEMA,
    migrate: true,
    supervise: false,
    schedule: false,
  });
  // start() installs or migrates the schema.
  await boss.start();
  try {
    for (const name of Object.values(QUEUES)) {
      // Creating leaves an existing queue as it was; updating brings it to these settings.
      await boss.createQueue(name, { name, ...QUEUE_SETTINGS[name] });
      await boss.updateQueue(name, { name, ...QUEUE_SETTINGS[name] });
    }
    await installNotifyTrigger(db);
    await installActiveIndex(db);
  } finally {
    await boss.stop({ graceful: false, close: false, wait: true });
  }
}

/**
 * Sent by the transaction that queues or re-queues a job, so delivered exactly when the job
 * is visible, whoever wrote it (this process, another one, an operator command). A row
 * trigger on the partitioned job table reaches every queue's partition; PostgreSQL folds
 * identical payloads of one transaction into one message.
 */
async function installNotifyTrigger(db: Kysely<Database>): Promise<void> {
  await sql
    .raw(`
      create or replace function ${JOBS_SCHEMA}.${NOTIFY_TRIGGER}() returns trigger
      language plpgsql as $$
      begin
        perform pg_notify('${JOBS_CHANNEL}', new.name || ' ' ||
          greatest(0, ceil(extract(epoch from new.start_after - now()) * 1000))::bigint);
        return null;
      end $$;
      create or replace trigger ${NOTIFY_TRIGGER}
        after insert or update of state on ${JOBS_SCHEMA}.job
        for each row when (new.state in ('created', 'retry'))
        execute function ${JOBS_SCHEMA}.${NOTIFY_TRIGGER}();`)
    .execute(db);
}

/**
 * The job table keeps finished jobs for hours (until pg-boss archives them); the reaper looks
 * for active ones every few seconds, so it reads them through a partial index. Made on the
 * partitioned table, it is made on every queue's partition, later ones included.
 */
async function installActiveIndex(db: Kysely<Database>): Promise<void> {
  await sql
    .raw(`create index if not exists ${ACTIVE_INDEX} on ${JOBS_SCHEMA}.job (started_on)
      where state = 'active'`)
    .execute(db);
}
