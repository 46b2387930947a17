// SQL of erasure receipts and of the sealed material their release jobs need (migration
// 0024). What the erasure deletes is in subject-rows.ts.
import { type ColumnType, type Selectable, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { hasStoppedBeatingSql } from '../../jobs/liveness.js';
import type { ManagedState } from '../partners/managed-state-store.js';

declare module '../../db/schema.js' {
  interface Database {
    erasure_receipts: ErasureReceiptTable;
    erasure_release_secrets: ErasureReleaseSecretTable;
  }
}

export type SubjectType = 'family' | 'child';

/** `pending` until the erasure's release job has ended for that platform. */
export type ReleaseStatus = 'pending' | 'released' | 'failed' | 'skipped';

export interface ReleaseOutcome {
  platform_id: string;
  status: ReleaseStatus;
}

type Json<T> = ColumnType<T, string, string>;

export interface ErasureReceiptTable {
  id: string;
  subject_type: SubjectType;
  subject_id: string;
  requested_by_user_id: string | null;
  org_id: string | null;
  environment: string | null;
  test_clock_id: string | null;
  requested_at: Date;
  completed_at: Date | null;
  erased: Json<Record<string, number>>;
  releases: Json<ReleaseOutcome[]>;
  signature: string | null;
}

export type ReceiptRow = Selectable<ErasureReceiptTable>;

export interface ErasureReleaseSecretTable {
  erasure_id: string;
  sealed: Buffer;
  key_id: string;
  expires_at: Date;
}

/** jsonb comes back parsed from PostgreSQL and PGlite alike; text is parsed here. */
function parsed<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

function rowOf(row: ReceiptRow): ReceiptRow {
  return { ...row, erased: parsed(row.erased), releases: parsed(row.releases) };
}

export async function insertReceipt(db: Db, row: ReceiptRow): Promise<void> {
  await db
    .insertInto('erasure_receipts')
    .values({
      ...row,
      erased: JSON.stringify(row.erased),
      releases: JSON.stringify(row.releases),
    })
    .execute();
}

export async function findReceipt(db: Db, id: string): Promise<ReceiptRow | undefined> {
  const row = await db
    .selectFrom('erasure_receipts')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? rowOf(row) : undefined;
}

/** The receipt, locked until the caller's commit, if it is still waiting for its releases. */
export async function lockOpenReceipt(db: Db, id: string): Promise<ReceiptRow | undefined> {
  const row = await db
    .selectFrom('erasure_receipts')
    .selectAll()
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  return row ? rowOf(row) : undefined;
}

export async function completeReceipt(
  db: Db,
  id: string,
  done: { releases: ReleaseOutcome[]; completed_at: Date; signature: string },
): Promise<void> {
  await db
    .updateTable('erasure_receipts')
    .set({
      releases: JSON.stringify(done.releases),
      completed_at: done.completed_at,
      signature: done.signature,
    })
    .where('id', '=', id)
    .execute();
}

export async function insertReleaseSecret(db: Db, row: ErasureReleaseSecretTable): Promise<void> {
  await db.insertInto('erasure_release_secrets').values(row).execute();
}

export async function findReleaseSecret(
  db: Db,
  erasureId: string,
): Promise<ErasureReleaseSecretTable | undefined> {
  const row = await db
    .selectFrom('erasure_release_secrets')
    .selectAll()
    .where('erasure_id', '=', erasureId)
    .executeTakeFirst();
  return row ? { ...row, sealed: Buffer.from(row.sealed) } : undefined;
}

export async function deleteReleaseSecret(db: Db, erasureId: string): Promise<void> {
  await db.deleteFrom('erasure_release_secrets').where('erasure_id', '=', erasureId).execute();
}

/** What a receipt keeps of the erased family: whose keys may read it, and its clock. */
export async function findFamilyOwnership(db: Db, familyId: string) {
  return db
    .selectFrom('families')
    .select(['org_id', 'environment', 'test_clock_id'])
    .where('id', '=', familyId)
    .executeTakeFirst();
}

/** The frozen time of a test clock (undefined: gone, or none: the real clock). */
export async function testClockTime(db: Db, clockId: string): Promise<Date | undefined> {
  const row = await db
    .selectFrom('test_clocks')
    .select('frozen_time')
    .where('id', '=', clockId)
    .executeTakeFirst();
  return row ? new Date(row.frozen_time) : undefined;
}

/**
 * The family's connections with what a release needs of each: the sealed credentials, the
 * record of what Haven applied on the partner profile, and until when a run holds that
 * profile now (null: nobody; a lease whose process stopped beating is nobody's).
 */
export async function connectionsToRelease(
  db: Db,
  familyId: string,
  lease: { now: Date; staleSeconds: number },
) {
  const rows = await db
    .selectFrom('family_connections as c')
    .leftJoin('partner_managed_state as m', 'm.connection_id', 'c.id')
    .select([
      'c.id',
      'c.platform_id',
      'c.status',
      'c.credentials',
      'c.credentials_key_id',
      'm.profile_id',
      'm.state',
      sql<Date | null>`case when m.lease_owner is not null and m.lease_until > ${lease.now}
        and not ${hasStoppedBeatingSql(sql.ref('m.lease_instance'), lease.staleSeconds)}
        then m.lease_until end`.as('busy_until'),
    ])
    .where('c.family_id', '=', familyId)
    // One connection per platform: the receipt lists them by platform, a stable order.
    .orderBy('c.platform_id')
    .execute();
  return rows.map((row) => ({
    ...row,
    credentials: row.credentials ? Buffer.from(row.credentials) : null,
    state: row.state === null ? null : parsed<ManagedState>(row.state),
    busy_until: row.busy_until === null ? null : new Date(row.busy_until),
  }));
}

/** Whether the connection still exists (a child's erasure leaves the family's). */
export async function connectionExists(db: Db, connectionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('family_connections')
    .select('id')
    .where('id', '=', connectionId)
    .executeTakeFirst();
  return row !== undefined;
}
