// Numbered, append-only SQL migrations, applied in one transaction under an advisory lock,
// so two processes starting at once apply each migration exactly once.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { installJobSchema } from '../jobs/install.js';
import type { Db } from './connect.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Any fixed number works; it only has to be the same for every Haven process. */
const MIGRATION_LOCK_ID = 7_403_221;
const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: string;
  name: string;
  sql: string;
}

export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_PATTERN.exec(file);
    if (!match?.[1] || !match[2]) {
      throw new Error(`migration file name "${file}" does not match NNNN_name.sql`);
    }
    migrations.push({
      version: match[1],
      name: match[2],
      sql: await readFile(new URL(file, `file://${dir}`), 'utf8'),
    });
  }
  return migrations;
}

/** Applies every migration not yet recorded; returns the versions it applied. */
export async function migrate(db: Db, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await readMigrations());
  const applied = await applySqlMigrations(db, all);
  // pg-boss's schema and Haven's queues (idempotent; pg-boss upgrades its own schema).
  await installJobSchema(db);
  return applied;
}

async function applySqlMigrations(db: Db, all: Migration[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx);
    await sql`
      create table if not exists schema_migrations (
        version text primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`.execute(trx);
    const done = new Set(
      (await trx.selectFrom('schema_migrations').select('version').execute()).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const migration of all) {
      if (done.has(migration.version)) {
        continue;
      }
      await sql.raw(migration.sql).execute(trx);
      await trx
        .insertInto('schema_migrations')
        .values({ version: migration.version, name: migration.name })
        .execute();
      applied.push(migration.version);
    }
    return applied;
  });
}
