// SQL of the retention purge (CONTRACT.md §12.4; migrations/0025_retention.sql). Two kinds of
// statement per record kind: a walk of the records older than a cutoff in the order of their
// time column (the real clock's run finds their owners with it), and a bounded delete of one
// owner's records older than a cutoff. Every one reads through an index.
import { type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/connect.js';

/** Where a walk stopped: the time (as the database prints it, so no precision is lost) and id. */
export interface Keyset {
  at: string;
  id: string;
}

/** A record a walk found, with its owner: a family, or an org (usage, an org's audit chain). */
export interface FoundRecord extends Keyset {
  family_id: string | null;
  org_id: string | null;
}

/** The records a family's purge removes, by table (the names of `changes` in its entry). */
export type FamilyTable = 'viewing_history' | 'device_reports' | 'webhook_deliveries';

/** Rows after `after` in (time, id) order: the index's own order, so the walk never sorts. */
function pastKeyset(time: string, id: string, after: Keyset | undefined): Expression<SqlBool> {
  if (!after) {
    return sql<SqlBool>`true`;
  }
  const at = sql`${after.at}::timestamptz`;
  return sql<SqlBool>`${sql.ref(time)} >= ${at} and (${sql.ref(time)} > ${at} or ${sql.ref(id)} > ${after.id})`;
}

/**
 * Records older than `cutoff`, oldest first, of families on the real clock (viewing history
 * and device reports, which the family's clock dates: a family on a test clock is purged by
 * its clock's runs instead, so its records are passed over) or of any family (deliveries).
 */
export function walkFamilyRecords(
  db: Db,
  table: FamilyTable,
  cutoff: Date,
  after: Keyset | undefined,
  limit: number,
) {
  switch (table) {
    case 'viewing_history':
      return db
        .selectFrom('viewing_history as r')
        .innerJoin('children as c', 'c.id', 'r.child_id')
        .innerJoin('families as f', 'f.id', 'c.family_id')
        .select([
          sql<string>`r.watched_at::text`.as('at'),
          'r.id',
          'c.family_id',
          sql<null>`null`.as('org_id'),
        ])
        .where('r.watched_at', '<', cutoff)
        .where(pastKeyset('r.watched_at', 'r.id', after))
        .where('f.test_clock_id', 'is', null)
        .orderBy('r.watched_at')
        .orderBy('r.id')
        .limit(limit);
    case 'device_reports':
      return db
        .selectFrom('device_reports as r')
        .innerJoin('children as c', 'c.id', 'r.child_id')
        .innerJoin('families as f', 'f.id', 'c.family_id')
        .select([
          sql<string>`r.reported_at::text`.as('at'),
          'r.id',
          'c.family_id',
          sql<null>`null`.as('org_id'),
        ])
        .where('r.reported_at', '<', cutoff)
        .where(pastKeyset('r.reported_at', 'r.id', after))
        .where('f.test_clock_id', 'is', null)
        .orderBy('r.reported_at')
        .orderBy('r.id')
        .limit(limit);
    case 'webhook_deliveries':
      // Dated by the real clock (Haven's own attempts), whatever the family's clock.
      return db
        .selectFrom('webhook_deliveries as r')
        .innerJoin('webhooks as w', 'w.id', 'r.webhook_id')
        .select([
          sql<string>`r.created_at::text`.as('at'),
          'r.id',
          'w.family_id',
          sql<null>`null`.as('org_id'),
        ])
        .where('r.status', '<>', 'pending')
        .where('r.created_at', '<', cutoff)
        .where(pastKeyset('r.created_at', 'r.id', after))
        .orderBy('r.created_at')
        .orderBy('r.id')
        .limit(limit);
  }
}

/**
 * Audit entries older than `cutoff` of org chains and of families on the real clock, oldest
 * first. An old entry behind a newer one in its chain (a family's clock moved back) stays
 * until the entries before it go: the walk passes over it once a run.
 */
export function walkAuditEntries(db: Db, cutoff: Date, after: Keyset | undefined, limit: number) {
  return db
    .selectFrom('audit_entries as r')
    .leftJoin('families as f', 'f.id', 'r.family_id')
    .select([sql<string>`r.occurred_at::text`.as('at'), 'r.id', 'r.family_id', 'r.org_id'])
    .where('r.occurred_at', '<', cutoff)
    .where(pastKeyset('r.occurred_at', 'r.id', after))
    .where((eb) =>
      eb.or([
        eb('r.org_id', 'is not', null),
        eb.and([eb('f.id', 'is not', null), eb('f.test_clock_id', 'is', null)]),
      ]),
    )
    .orderBy('r.occurred_at')
    .orderBy('r.id')
    .limit(limit);
}

/** Usage rollups older than `cutoff` (usage lives on the real clock), oldest first. */
export function walkUsage(db: Db, cutoff: Date, after: Keyset | undefined, limit: number) {
  return db
    .selectFrom('developer_usage as r')
    .select([
      sql<string>`r.hour::text`.as('at'),
      'r.id',
      sql<null>`null`.as('family_id'),
      'r.org_id',
    ])
    .where('r.hour', '<', cutoff)
    .where(pastKeyset('r.hour', 'r.id', after))
    .orderBy('r.hour')
    .orderBy('r.id')
    .limit(limit);
}

/** Up to `limit` of a family's records in `table` older than `cutoff`, removed. */
export function deleteFamilyRecords(
  db: Db,
  table: FamilyTable,
  familyId: string,
  cutoff: Date,
  limit: number,
) {
  switch (table) {
    case 'viewing_history':
      return db
        .deleteFrom('viewing_history')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('viewing_history as r')
            .innerJoin('children as c', 'c.id', 'r.child_id')
            .select('r.id')
            .where('c.family_id', '=', familyId)
            .where('r.watched_at', '<', cutoff)
            .limit(limit),
        );
    case 'device_reports':
      return db
        .deleteFrom('device_reports')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('device_reports as r')
            .innerJoin('children as c', 'c.id', 'r.child_id')
            .select('r.id')
            .where('c.family_id', '=', familyId)
            .where('r.reported_at', '<', cutoff)
            .limit(limit),
        );
    case 'webhook_deliveries':
      return db
        .deleteFrom('webhook_deliveries')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries as r')
            .innerJoin('webhooks as w', 'w.id', 'r.webhook_id')
            .select('r.id')
            .where('w.family_id', '=', familyId)
            .where('r.status', '<>', 'pending')
            .where('r.created_at', '<', cutoff)
            .limit(limit),
        );
  }
}

/** Up to `limit` of an org's usage rollups older than `cutoff`, removed. */
export function deleteOrgUsage(db: Db, orgId: string, cutoff: Date, limit: number) {
  return db
    .deleteFrom('developer_usage')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('developer_usage')
        .select('id')
        .where('org_id', '=', orgId)
        .where('hour', '<', cutoff)
        .limit(limit),
    );
}

/** The chain's oldest entry still kept (none: the chain has no entry). */
export function oldestEntry(db: Db, chainId: string) {
  return db
    .selectFrom('audit_entries')
    .select(['seq', 'occurred_at'])
    .where('chain_id', '=', chainId)
    .orderBy('seq')
    .limit(1);
}

/**
 * The first entry of a chain that is not older than `cutoff` (its seq), or undefined when
 * every entry is: the purge removes everything before it, so the chain still verifies from it.
 */
export function firstKeptEntry(db: Db, chainId: string, cutoff: Date) {
  return db
    .selectFrom('audit_entries')
    .select('seq')
    .where('chain_id', '=', chainId)
    .where('occurred_at', '>=', cutoff)
    .orderBy('seq')
    .limit(1);
}

/**
 * Up to `limit` of the chain's oldest entries before `keptSeq` (all of them when undefined),
 * removed. The caller's transaction must allow it (audit/store.ts allowAuditRemoval).
 */
export function deleteChainPrefix(
  db: Db,
  chainId: string,
  keptSeq: number | undefined,
  limit: number,
) {
  return db.deleteFrom('audit_entries').where('id', 'in', (eb) => {
    const oldest = eb
      .selectFrom('audit_entries')
      .select('id')
      .where('chain_id', '=', chainId)
      .orderBy('seq')
      .limit(limit);
    return keptSeq === undefined ? oldest : oldest.where('seq', '<', keptSeq);
  });
}

/**
 * The family, locked against another purge of it until the commit (a second process's purge
 * waits, then finds nothing), with the time of its test clock. Writes of the family's records
 * are not held up (they lock the family row for key share only).
 */
export async function lockFamily(db: Db, familyId: string) {
  return db
    .selectFrom('families as f')
    .leftJoin('test_clocks as t', 't.id', 'f.test_clock_id')
    .select(['f.test_clock_id', sql<Date | null>`t.frozen_time`.as('clock_time')])
    .where('f.id', '=', familyId)
    .forNoKeyUpdate('f')
    .executeTakeFirst();
}

/** The org, locked against another purge of it until the commit (as lockFamily). */
export async function lockOrg(db: Db, orgId: string): Promise<boolean> {
  const row = await db
    .selectFrom('developer_orgs')
    .select('id')
    .where('id', '=', orgId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Completed erasure receipts older than `cutoff` dated by the real clock (no test clock, or
 * one deleted since), oldest first, with the org they belong to (none: a person's erasure).
 */
export function walkReceipts(db: Db, cutoff: Date, after: Keyset | undefined, limit: number) {
  return db
    .selectFrom('erasure_receipts as r')
    .leftJoin('test_clocks as t', 't.id', 'r.test_clock_id')
    .select([
      sql<string>`r.requested_at::text`.as('at'),
      'r.id',
      sql<null>`null`.as('family_id'),
      'r.org_id',
    ])
    .where('r.completed_at', 'is not', null)
    .where('r.requested_at', '<', cutoff)
    .where(pastKeyset('r.requested_at', 'r.id', after))
    .where('t.id', 'is', null)
    .orderBy('r.requested_at')
    .orderBy('r.id')
    .limit(limit);
}

/**
 * Up to `limit` completed receipts older than `cutoff` of one org (null: of none), dated by the
 * test clock `clockId` (null: by the real clock), removed.
 */
export function deleteReceipts(
  db: Db,
  orgId: string | null,
  clockId: string | null,
  cutoff: Date,
  limit: number,
) {
  return db.deleteFrom('erasure_receipts').where('id', 'in', (eb) => {
    let due = eb
      .selectFrom('erasure_receipts as r')
      .select('r.id')
      .where('r.completed_at', 'is not', null)
      .where('r.requested_at', '<', cutoff)
      .where('r.org_id', orgId === null ? 'is' : '=', orgId)
      .limit(limit);
    due =
      clockId === null
        ? due.where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('test_clocks as t')
                  .select('t.id')
                  .whereRef('t.id', '=', 'r.test_clock_id'),
              ),
            ),
          )
        : due.where('r.test_clock_id', '=', clockId);
    return due;
  });
}

/** The owners (orgs, null for none) of completed receipts a test clock dates older than `cutoff`. */
export async function receiptOwnersOnClock(
  db: Db,
  clockId: string,
  cutoff: Date,
): Promise<Array<string | null>> {
  const rows = await db
    .selectFrom('erasure_receipts')
    .select('org_id')
    .distinct()
    .where('test_clock_id', '=', clockId)
    .where('completed_at', 'is not', null)
    .where('requested_at', '<', cutoff)
    .execute();
  return rows.map((row) => row.org_id);
}
