// SQL of children.
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    children: ChildTable;
  }
}

export interface ChildTable {
  id: string;
  family_id: string;
  name: string;
  /** `YYYY-MM-DD` (the date type is read as a string on both backends). */
  birth_date: string;
  avatar_url: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ChildRow = ChildTable;

export async function insertChild(db: Db, child: ChildRow): Promise<void> {
  await db.insertInto('children').values(child).execute();
}

export async function listChildren(db: Db, familyId: string): Promise<ChildRow[]> {
  return db
    .selectFrom('children')
    .selectAll()
    .where('family_id', '=', familyId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findChild(db: Db, childId: string): Promise<ChildRow | undefined> {
  return db.selectFrom('children').selectAll().where('id', '=', childId).executeTakeFirst();
}

export async function updateChild(
  db: Db,
  childId: string,
  changes: Partial<Pick<ChildRow, 'name' | 'birth_date' | 'avatar_url'>> & { updated_at: Date },
): Promise<ChildRow> {
  return db
    .updateTable('children')
    .set(changes)
    .where('id', '=', childId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteChild(db: Db, childId: string): Promise<void> {
  await db.deleteFrom('children').where('id', '=', childId).execute();
}
