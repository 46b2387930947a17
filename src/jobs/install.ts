// Installs (or upgrades) pg-boss's own schema and creates Haven's queues. Run by the migration
// step, after Haven's SQL migrations, so `npm run migrate` prepares everything and a test
// template database already holds it.
import type { Kysely } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database } from '../db/schema.js';
import { bossDatabase } from './boss-database.js';
import { QUEUE_SETTINGS, QUEUES } from './queues.js';

export const JOBS_SCHEMA = 'pgboss';

export async function installJobSchema(db: Kysely<Database>): Promise<void> {
  const boss = new PgBoss({
    db: bossDatabase(db),
    schema: JOBS_SCHEMA,
    migrate: true,
    supervise: false,
    schedule: false,
  });
  // start() installs or migrates the schema under pg-boss's own advisory lock.
  await boss.start();
  try {
    for (const name of Object.values(QUEUES)) {
      await boss.createQueue(name, { name, ...QUEUE_SETTINGS[name] });
    }
  } finally {
    await boss.stop({ graceful: false, close: false, wait: true });
  }
}
