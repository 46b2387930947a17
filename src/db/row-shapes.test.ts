// Direct reads (PostgreSQL) keep each statement's columns from one result to the next
// (db/row-shapes.ts): rows and their types are what Kysely's path gives for the same
// statement, read after read, and a change to the columns is seen at once.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { reusedStatement } from './reused-statement.js';

describe.runIf(process.env.DATABASE_URL)('row shapes of direct reads', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const db = database.handle.db;
    await sql`create table shaped (
      id int8 primary key,
      at timestamptz not null,
      day date,
      label text,
      flags jsonb,
      ok boolean
    )`.execute(db);
    await sql`insert into shaped values
      (1, '2026-11-27 08:25:40.123456+00', '2016-05-01', 'one', '{"a":1}', true),
      (2, '1999-12-31 23:59:59+05:30', null, null, null, false)`.execute(db);
  });
  afterAll(() => database.drop());

  const shapedRead = reusedStatement(['from'], (db, { from }) =>
    db
      // biome-ignore lint/suspicious/noExplicitAny: a table of this test only
      .selectFrom('shaped' as any)
      .selectAll()
      .where('id', '>=', from)
      .orderBy('id'),
  );

  it('reads what Kysely reads, every time, and sees a change of columns', async () => {
    const db = database.handle.db;
    const viaKysely = async () =>
      (await db.executeQuery(shapedRead.compile(db, { from: '1' }))).rows;
    const expected = await viaKysely();
    expect(expected).toEqual([
      {
        id: 1,
        at: new Date('2026-11-27T08:25:40.123Z'),
        day: '2016-05-01',
        label: 'one',
        flags: { a: 1 },
        ok: true,
      },
      {
        id: 2,
        at: new Date('1999-12-31T18:29:59.000Z'),
        day: null,
        label: null,
        flags: null,
        ok: false,
      },
    ]);
    for (let read = 0; read < 5; read++) {
      const rows = await shapedRead.execute(db, { from: '1' });
      expect(rows).toEqual(expected);
      // Each row its own object: the kept empty row is copied, never handed out.
      expect(rows[0]).not.toBe(rows[1]);
      (rows[0] as Record<string, unknown>).label = 'changed by a caller';
    }
    expect(await shapedRead.execute(db, { from: '2' })).toEqual([expected[1]]);

    // A column more, and one of another type: the next read has them.
    await sql`alter table shaped add column extra text default 'x'`.execute(db);
    await sql`alter table shaped alter column label type int4 using length(label)`.execute(db);
    const changed = await shapedRead.execute(db, { from: '1' });
    expect(changed).toEqual(await viaKysely());
    expect(changed[0]).toMatchObject({ label: 3, extra: 'x' });
  });
});
