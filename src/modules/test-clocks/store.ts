// SQL of sandbox test clocks (CONTRACT.md §11.3).
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    test_clocks: TestClockTable;
  }
}

export type TestClockStatus = 'ready' | 'advancing';

export interface TestClockTable {
  id: string;
  /** Who made it, as callers are named for receipts (auth/principal.ts callerKeyOf). */
  owner: string;
  user_id: string | null;
  org_id: string | null;
  name: string | null;
  frozen_time: Date;
  status: TestClockStatus;
  created_at: Date;
}

export type TestClockRow = TestClockTable;

export async function insertTestClock(db: Db, clock: TestClockRow): Promise<void> {
  await db.insertInto('test_clocks').values(clock).execute();
}

/** The owner's clock (no row: none, or another caller's). */
export async function findTestClock(db: Db, id: string, owner: string) {
  return db
    .selectFrom('test_clocks')
    .selectAll()
    .where('id', '=', id)
    .where('owner', '=', owner)
    .executeTakeFirst();
}

/** Moves a ready clock forward and marks it advancing (false: it was advancing already). */
export async function startAdvance(
  db: Db,
  id: string,
  frozenTime: Date,
): Promise<TestClockRow | undefined> {
  return db
    .updateTable('test_clocks')
    .set({ frozen_time: frozenTime, status: 'advancing' })
    .where('id', '=', id)
    .where('status', '=', 'ready')
    .returningAll()
    .executeTakeFirst();
}

export async function finishAdvance(db: Db, id: string): Promise<void> {
  await db.updateTable('test_clocks').set({ status: 'ready' }).where('id', '=', id).execute();
}

export async function findClockById(db: Db, id: string) {
  return db.selectFrom('test_clocks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The families attached to a clock. */
export async function familiesOnClock(db: Db, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('families')
    .select('id')
    .where('test_clock_id', '=', id)
    .execute();
  return rows.map((row) => row.id);
}

export async function deleteTestClock(db: Db, id: string): Promise<void> {
  await db.deleteFrom('test_clocks').where('id', '=', id).execute();
}

export async function setFamilyClock(
  db: Db,
  familyId: string,
  clockId: string | null,
): Promise<void> {
  await db
    .updateTable('families')
    .set({ test_clock_id: clockId })
    .where('id', '=', familyId)
    .execute();
}
