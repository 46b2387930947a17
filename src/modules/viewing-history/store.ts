// SQL of viewing history: written from devices' `viewing` reports, read newest first.
import type { Db } from '../../db/connect.js';
import { childAnchor } from '../children/store.js';
import { type FamilyTenant, withRows } from '../families/store.js';

declare module '../../db/schema.js' {
  interface Database {
    viewing_history: ViewingHistoryTable;
  }
}

export interface ViewingHistoryTable {
  id: string;
  child_id: string;
  /** Null once the device that reported it is deleted. */
  device_id: string | null;
  platform: string;
  title: string;
  series_title: string | null;
  watched_at: Date;
  created_at: Date;
}

export type ViewingEntryRow = ViewingHistoryTable;

export async function insertViewingEntry(db: Db, entry: ViewingEntryRow): Promise<void> {
  await db.insertInto('viewing_history').values(entry).execute();
}

/**
 * A page of a child's history, newest first, with its family's facts: one statement (the
 * page is cut inside the joined subquery, so a page past the end still has its facts).
 */
export async function listViewingHistoryRead(
  db: Db,
  childId: string,
  tenant: FamilyTenant,
  page: { limit: number; offset: number },
) {
  return withRows(
    db,
    childAnchor(db, childId, tenant),
    db
      .selectFrom('viewing_history')
      .selectAll()
      .where('child_id', '=', childId)
      .orderBy('watched_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset),
    [
      ['watched_at', 'desc'],
      ['id', 'desc'],
    ],
  ).execute();
}
