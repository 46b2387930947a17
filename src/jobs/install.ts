// Installs (or upgrades) pg-boss's own schema and creates Haven's queues. Run by the migration
// step, after Haven's SQL migrations, so `npm run migrate` prepares everything and a test
// template database already holds it.
import { type Kysely, sql } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database } from '../db/schema.js';
import { bossDatabase } from './boss-database.js';
import { QUEUE_SETTINGS, QUEUES } from './queues.js';

export const JOBS_SCHEMA = 'pgboss';

/** Any fixed number: the same in every Haven process. */
const INSTALL_LOCK_ID = 7_403_222;

export async function installJobSchema(db: Kysely<Database>): Promise<void> {
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
      await boss.createQueue(name, { name, ...QUEUE_SETTINGS[name] });
    }
  } finally {
    await boss.stop({ graceful: false, close: false, wait: true });
  }
}
