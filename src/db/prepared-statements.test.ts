// Reused statements run as server-side prepared statements on PostgreSQL: parsed once per
// connection and reused, never inside a transaction, and still answering after a migration
// changes a table they read or after the session lost them (0A000 and 26000 are recovered
// from, not passed on).
// PGlite's pool is not wrapped (db/prepared-statements.ts): these run on PostgreSQL only.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import type { Db } from './connect.js';
import { reusedStatement } from './reused-statement.js';

interface Prepared {
  name: string;
  statement: string;
  executions: number;
}

/** The prepared statements of the connection the next query gets (the pool's last used). */
async function preparedOnConnection(db: Db): Promise<Prepared[]> {
  const { rows } = await sql<Prepared>`
    select name, statement, (generic_plans + custom_plans)::int as executions
    from pg_prepared_statements`.execute(db);
  return rows;
}

describe.runIf(process.env.DATABASE_URL)('prepared statements on PostgreSQL', () => {
  let database: TestDatabase;
  const familyId = randomUUID();
  beforeAll(async () => {
    database = await createTestDatabase();
    const now = new Date('2026-01-01T00:00:00Z');
    await database.handle.db
      .insertInto('families')
      .values({
        id: familyId,
        org_id: null,
        environment: 'test',
        name: 'Prepared',
        created_at: now,
        updated_at: now,
      })
      .execute();
  });
  afterAll(() => database.drop());

  it('parses a reused statement once per connection and runs it from then on', async () => {
    const familyNamed = reusedStatement(['id'], (db, { id }) =>
      db.selectFrom('families').select(['id', 'name']).where('id', '=', id),
    );
    const db = database.handle.db;
    // Awaited one after another, the reads reuse the pool's one idle connection.
    for (let run = 0; run < 8; run++) {
      expect(await familyNamed.execute(db, { id: familyId })).toEqual([
        { id: familyId, name: 'Prepared' },
      ]);
    }
    const text = familyNamed.compile(db, { id: familyId }).sql;
    const prepared = (await preparedOnConnection(db)).filter((row) => row.statement === text);
    expect(prepared).toHaveLength(1);
    expect(prepared[0]?.name).toMatch(/^haven_\d+$/);
    expect(prepared[0]?.executions).toBe(8);
  });

  it('still answers after a migration adds a column to a table it reads with *', async () => {
    const familyWhole = reusedStatement(['id'], (db, { id }) =>
      db.selectFrom('families').selectAll().where('id', '=', id),
    );
    const db = database.handle.db;
    const before = await familyWhole.execute(db, { id: familyId });
    expect(before[0]).toMatchObject({ id: familyId, name: 'Prepared' });
    expect(before[0]).not.toHaveProperty('prepared_probe');

    // What another instance's migration does during a rolling deploy. The prepared plan's
    // result type is now stale on the connection that prepared it.
    await sql`alter table families add column prepared_probe integer`.execute(db);
    try {
      for (let run = 0; run < 3; run++) {
        const after = await familyWhole.execute(db, { id: familyId });
        expect(after[0]).toMatchObject({ id: familyId, name: 'Prepared', prepared_probe: null });
      }
      const text = familyWhole.compile(db, { id: familyId }).sql;
      const names = (await preparedOnConnection(db))
        .filter((row) => row.statement === text)
        .map((row) => row.name);
      // The stale name stays on the connection (pg has no way to forget it); a new one runs.
      expect(names).toHaveLength(2);
      expect(names.some((name) => /_g1$/.test(name))).toBe(true);
    } finally {
      await sql`alter table families drop column prepared_probe`.execute(db);
    }
  });

  it('still answers when the session lost its prepared statements', async () => {
    const familyIdOnly = reusedStatement(['id'], (db, { id }) =>
      db.selectFrom('families').select(['id']).where('id', '=', id),
    );
    const db = database.handle.db;
    expect(await familyIdOnly.execute(db, { id: familyId })).toEqual([{ id: familyId }]);
    // What DISCARD ALL (or a pooler handing the session on) does; pg still counts the
    // statement as prepared on this connection.
    await sql`deallocate all`.execute(db);
    for (let run = 0; run < 2; run++) {
      expect(await familyIdOnly.execute(db, { id: familyId })).toEqual([{ id: familyId }]);
    }
    // Lost again and again (a pooler in transaction mode would do that): after a few
    // renames the text runs unnamed, and nothing more is left behind in the session.
    for (let lost = 0; lost < 4; lost++) {
      await sql`deallocate all`.execute(db);
      expect(await familyIdOnly.execute(db, { id: familyId })).toEqual([{ id: familyId }]);
    }
    const text = familyIdOnly.compile(db, { id: familyId }).sql;
    expect((await preparedOnConnection(db)).filter((row) => row.statement === text)).toEqual([]);
    expect(await familyIdOnly.execute(db, { id: familyId })).toEqual([{ id: familyId }]);
    expect((await preparedOnConnection(db)).filter((row) => row.statement === text)).toEqual([]);
  });

  it('leaves statements inside a transaction unnamed', async () => {
    const familyName = reusedStatement(['id'], (db, { id }) =>
      db.selectFrom('families').select('name').where('id', '=', id),
    );
    await database.handle.db.transaction().execute(async (trx) => {
      expect(await familyName.execute(trx, { id: familyId })).toEqual([{ name: 'Prepared' }]);
      const text = familyName.compile(trx, { id: familyId }).sql;
      // The transaction's own connection: nothing was prepared for the statement on it.
      const prepared = await preparedOnConnection(trx);
      expect(prepared.filter((row) => row.statement === text)).toEqual([]);
    });
  });
});
