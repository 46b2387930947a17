// SQL of age signals (CONTRACT.md §11.2). Reads carry the facts of the child's family (see
// families/store.ts), so a caller's visibility is decided from the read's own result.
import type { Db } from '../../db/connect.js';
import { type ChildRow, childAnchor } from '../children/store.js';
import { type FamilyTenant, withRows } from '../families/store.js';
import type { AgeSignalSource, CountingSignal } from './signals.js';

declare module '../../db/schema.js' {
  interface Database {
    age_signals: AgeSignalTable;
  }
}

export interface AgeSignalTable {
  id: string;
  child_id: string;
  source: AgeSignalSource;
  age_lower: number | null;
  age_upper: number | null;
  method: string | null;
  observed_at: Date;
  created_at: Date;
}

export type AgeSignalRow = AgeSignalTable;

export async function insertAgeSignal(db: Db, signal: AgeSignalRow): Promise<void> {
  await db.insertInto('age_signals').values(signal).execute();
}

/**
 * A child's signals, newest observation first, the later recorded first on a tie (then the
 * id, so the order is stable), with its family's facts: one statement.
 */
export async function listAgeSignalsRead(db: Db, childId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    childAnchor(db, childId, tenant),
    db.selectFrom('age_signals').selectAll().where('child_id', '=', childId),
    [
      ['observed_at', 'desc'],
      ['created_at', 'desc'],
      ['id', 'desc'],
    ],
  ).execute();
}

/** Stores the child's counting signals and answers the child as it now is. */
export async function setCountingSignals(
  db: Db,
  childId: string,
  counting: readonly CountingSignal[],
): Promise<ChildRow> {
  return db
    .updateTable('children')
    .set({ counting_signals: JSON.stringify(counting) })
    .where('id', '=', childId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
