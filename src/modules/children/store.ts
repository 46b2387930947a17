// SQL of children. Reads carry the facts of the child's family (see families/store.ts), so
// a caller's visibility is decided from the read's own result.
import type { ColumnType } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { CountingSignal } from '../age/signals.js';
import {
  type FamilyTenant,
  familyAnchor,
  familyFacts,
  NEWEST_FIRST,
  tenantRead,
  withRows,
} from '../families/store.js';

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
  /** The effective age whose `age` rules are in force; null until first applied. */
  age_applied: number | null;
  /** `YYYY-MM-DD`: the day (UTC, family clock) the age next changes; the daily run's index. */
  next_age_change_on: string;
  /** jsonb: the latest age signal of each source (modules/age/signals.ts). */
  counting_signals: ColumnType<CountingSignal[], string, string>;
}

export type ChildRow = Omit<ChildTable, 'counting_signals'> & {
  counting_signals: CountingSignal[];
};

/** A child as a row to insert (its signals as JSON text). */
export function childValues(child: ChildRow) {
  return { ...child, counting_signals: JSON.stringify(child.counting_signals) };
}

export async function insertChild(db: Db, child: ChildRow): Promise<void> {
  await db.insertInto('children').values(childValues(child)).execute();
}

/**
 * The children of a family, newest first, with the family's facts for the tenant: one
 * statement (the bench's comparator runs what this runs: bench/children-read-sql.ts).
 */
const childrenRead = tenantRead(['familyId'], (db, { familyId }, tenant) =>
  withRows(
    db,
    familyAnchor(db, familyId, tenant),
    db.selectFrom('children').selectAll().where('family_id', '=', familyId),
    NEWEST_FIRST,
  ),
);

export function listChildrenRead(db: Db, familyId: string, tenant: FamilyTenant) {
  return childrenRead.execute(db, { familyId }, tenant);
}

const childRead = tenantRead(['childId'], (db, { childId }, tenant) =>
  db
    .selectFrom('children as c')
    .innerJoin('families as f', 'f.id', 'c.family_id')
    .selectAll('c')
    .select(familyFacts(tenant))
    .where('c.id', '=', childId),
);

/** A child with its family's facts for `tenant` (no row: no such child). */
export async function findChildRead(db: Db, childId: string, tenant: FamilyTenant) {
  const [row] = await childRead.execute(db, { childId }, tenant);
  return row;
}

/**
 * Only the facts of a child's family (the anchor of a list read by child id, see
 * `withRows`): no row when there is no such child.
 */
export function childAnchor(db: Db, childId: string, tenant: FamilyTenant) {
  return db
    .selectFrom('children as c')
    .innerJoin('families as f', 'f.id', 'c.family_id')
    .select(familyFacts(tenant))
    .where('c.id', '=', childId);
}

export async function updateChild(
  db: Db,
  childId: string,
  changes: Partial<Pick<ChildRow, 'name' | 'birth_date' | 'avatar_url' | 'next_age_change_on'>> & {
    updated_at: Date;
  },
): Promise<ChildRow> {
  return db
    .updateTable('children')
    .set(changes)
    .where('id', '=', childId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whose age changes are due: children on the real clock, or those of one test clock's families. */
export type AgeChangeScope = { clock: 'real'; today: string } | { clock: string; until: string };

/**
 * Up to `limit` children whose age change is due first, locked for this transaction; those
 * another transaction holds are skipped, so runs in several processes share the due children
 * and each is applied by exactly one (its next date has moved once the holder commits).
 * Reads the `next_age_change_on` index, never the whole table.
 */
export async function claimDueChildren(
  db: Db,
  scope: AgeChangeScope,
  limit: number,
): Promise<ChildRow[]> {
  const query =
    scope.clock === 'real'
      ? db
          .selectFrom('children as c')
          .selectAll('c')
          .where('c.next_age_change_on', '<=', (scope as { today: string }).today)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('families as f')
                  .select('f.id')
                  .whereRef('f.id', '=', 'c.family_id')
                  .where('f.test_clock_id', 'is not', null),
              ),
            ),
          )
      : db
          .selectFrom('children as c')
          .innerJoin('families as f', 'f.id', 'c.family_id')
          .selectAll('c')
          .where('f.test_clock_id', '=', scope.clock)
          .where('c.next_age_change_on', '<=', (scope as { until: string }).until);
  return query.orderBy('c.next_age_change_on').limit(limit).forUpdate('c').skipLocked().execute();
}

/** The child under a row lock (an age signal and a birthday of one child take turns). */
export async function lockChild(db: Db, childId: string): Promise<ChildRow | undefined> {
  return db
    .selectFrom('children')
    .selectAll()
    .where('id', '=', childId)
    .forUpdate()
    .executeTakeFirst();
}

export async function recordAppliedAge(
  db: Db,
  childId: string,
  applied: { age: number; nextChangeOn: string },
): Promise<void> {
  await db
    .updateTable('children')
    .set({ age_applied: applied.age, next_age_change_on: applied.nextChangeOn })
    .where('id', '=', childId)
    .execute();
}

/** The family's children are due on `day`: their clock changed, so their ages may have. */
export async function markFamilyChildrenDue(db: Db, familyId: string, day: string): Promise<void> {
  await db
    .updateTable('children')
    .set({ next_age_change_on: day })
    .where('family_id', '=', familyId)
    .execute();
}
