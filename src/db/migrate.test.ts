import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createBlankPGlite } from '../../test/database.js';
import { databaseUrlFor, withAdminClient } from '../../test/postgres-admin.js';
import { connectPostgres, type DatabaseHandle } from './connect.js';
import { migrate, readMigrations } from './migrate.js';

const adminUrl = process.env.DATABASE_URL;

async function appliedVersions(handle: DatabaseHandle): Promise<string[]> {
  const rows = await handle.db.selectFrom('schema_migrations').select('version').execute();
  return rows.map((row) => row.version).sort();
}

describe('migrations', () => {
  it('are numbered NNNN_name.sql, in order, without gaps', async () => {
    const migrations = await readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    migrations.forEach((migration, index) => {
      expect(migration.version).toBe(String(index + 1).padStart(4, '0'));
    });
  });

  it('apply once on the embedded engine, even when asked twice at once', async () => {
    const handle = await createBlankPGlite();
    try {
      const [a, b] = await Promise.all([migrate(handle.db), migrate(handle.db)]);
      const all = (await readMigrations()).map((m) => m.version);
      expect([...a, ...b].sort()).toEqual(all);
      expect(await appliedVersions(handle)).toEqual(all);
      expect(await migrate(handle.db)).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it.runIf(adminUrl)(
    'apply once on PostgreSQL when two processes start at once (advisory lock)',
    async () => {
      const admin = adminUrl ?? '';
      const name = `haven_t_migrate_${process.pid}`;
      await withAdminClient(admin, async (client) => {
        await client.query(`drop database if exists ${name} with (force)`);
        await client.query(`create database ${name}`);
      });
      // Two separate pools: two independent sessions, as two processes would have.
      const first = connectPostgres(databaseUrlFor(admin, name));
      const second = connectPostgres(databaseUrlFor(admin, name));
      try {
        const [a, b] = await Promise.all([migrate(first.db), migrate(second.db)]);
        const all = (await readMigrations()).map((m) => m.version);
        expect([...a, ...b].sort()).toEqual(all);
        expect(await appliedVersions(first)).toEqual(all);
        const tables = await sql<{ n: number }>`
          select count(*) as n from information_schema.tables where table_name = 'idempotency_keys'
        `.execute(first.db);
        expect(tables.rows[0]?.n).toBe(1);
      } finally {
        await first.close();
        await second.close();
        await withAdminClient(admin, (client) =>
          client.query(`drop database if exists ${name} with (force)`),
        );
      }
    },
  );

  it('rolls back a failing migration whole', async () => {
    const handle = await createBlankPGlite();
    try {
      const good = await readMigrations();
      const broken = [
        ...good,
        { version: '9999', name: 'broken', sql: 'create table half_done (id int); select nope;' },
      ];
      await expect(migrate(handle.db, broken)).rejects.toThrow();
      const tables = await sql<{ n: number }>`
        select count(*) as n from information_schema.tables where table_name in ('half_done', 'schema_migrations')
      `.execute(handle.db);
      expect(tables.rows[0]?.n).toBe(0);
    } finally {
      await handle.close();
    }
  });
});
