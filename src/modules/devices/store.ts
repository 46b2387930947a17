// SQL of devices and their reports. Only a key's SHA-256 is written; no read but the one
// that verifies a key selects it.
import { type ColumnType, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { childAnchor } from '../children/store.js';
import { type FamilyTenant, NEWEST_FIRST, withRows } from '../families/store.js';

declare module '../../db/schema.js' {
  interface Database {
    devices: DeviceTable;
    device_reports: DeviceReportTable;
  }
}

export type DeviceStatus = 'active' | 'revoked';

/** jsonb: read back parsed, written as JSON text (pg would send a JS array as a SQL array). */
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export interface DeviceTable {
  id: string;
  child_id: string;
  family_id: string;
  device_name: string;
  platform_id: string | null;
  device_model: string | null;
  os_version: string | null;
  app_version: string | null;
  status: DeviceStatus;
  key_hash: string;
  key_prefix: string;
  acknowledged_version: number | null;
  acknowledged_at: Date | null;
  enforcement_status: NullableJson<Record<string, unknown>>;
  enforcement_reported_at: Date | null;
  last_seen_at: Date | null;
  created_at: Date;
  updated_at: Date;
  revoked_at: Date | null;
}

export interface DeviceReportTable {
  id: string;
  device_id: string;
  child_id: string;
  report_type: string;
  payload: Json<Record<string, unknown>>;
  reported_at: Date;
  received_at: Date;
}

/** A device as every read sees it: no key hash. */
export interface DeviceRow {
  id: string;
  child_id: string;
  family_id: string;
  device_name: string;
  platform_id: string | null;
  device_model: string | null;
  os_version: string | null;
  app_version: string | null;
  status: DeviceStatus;
  key_prefix: string;
  last_seen_at: Date | null;
  acknowledged_version: number | null;
  enforcement_status: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  revoked_at: Date | null;
}

export type NewDevice = DeviceRow & { key_hash: string };

const PUBLIC_COLUMNS = [
  'id',
  'child_id',
  'family_id',
  'device_name',
  'platform_id',
  'device_model',
  'os_version',
  'app_version',
  'status',
  'key_prefix',
  'last_seen_at',
  'acknowledged_version',
  'enforcement_status',
  'created_at',
  'updated_at',
  'revoked_at',
] as const;

export async function insertDevice(db: Db, device: NewDevice): Promise<void> {
  await db
    .insertInto('devices')
    .values({
      ...device,
      enforcement_status: null,
      acknowledged_at: null,
      enforcement_reported_at: null,
    })
    .execute();
}

export async function findDevice(db: Db, id: string): Promise<DeviceRow | undefined> {
  return db.selectFrom('devices').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** A child's devices, newest first, with its family's facts: one statement. */
export async function listDevicesRead(db: Db, childId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    childAnchor(db, childId, tenant),
    db.selectFrom('devices').select(PUBLIC_COLUMNS).where('child_id', '=', childId),
    NEWEST_FIRST,
  ).execute();
}

/** What verifying a key needs, by the key's hash. */
export async function findDeviceByKeyHash(db: Db, keyHash: string) {
  return db
    .selectFrom('devices')
    .select(['id', 'child_id', 'family_id', 'status'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Revokes an active device; the row (with the hash to invalidate) only when it changed. */
export async function revokeDevice(db: Db, id: string, now: Date) {
  return db
    .updateTable('devices')
    .set({ status: 'revoked', revoked_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .returning(['key_hash'])
    .executeTakeFirst();
}

/** False when the device is gone (its child or family was deleted). */
export async function acknowledgeVersion(
  db: Db,
  id: string,
  version: number,
  now: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('devices')
    .set({ acknowledged_version: version, acknowledged_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export type NewReport = Omit<DeviceReportTable, 'payload'> & { payload: Record<string, unknown> };

export async function insertReport(db: Db, report: NewReport): Promise<void> {
  await db
    .insertInto('device_reports')
    .values({ ...report, payload: JSON.stringify(report.payload) })
    .execute();
}

/** Keeps the newest summary: a report that arrives late never replaces a fresher one. */
export async function writeEnforcementSummary(
  db: Db,
  id: string,
  summary: Record<string, unknown>,
  reportedAt: Date,
  now: Date,
): Promise<void> {
  await db
    .updateTable('devices')
    .set({
      enforcement_status: JSON.stringify(summary),
      enforcement_reported_at: reportedAt,
      updated_at: now,
    })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('enforcement_reported_at', 'is', null),
        eb('enforcement_reported_at', '<=', reportedAt),
      ]),
    )
    .execute();
}

/** Moves last_seen_at forward only: an instance flushing late never writes an older stamp. */
export async function writeLastSeen(db: Db, seen: ReadonlyMap<string, Date>): Promise<void> {
  if (seen.size === 0) {
    return;
  }
  const rows = [...seen].map(([id, at]) => sql`(${id}::uuid, ${at.toISOString()}::timestamptz)`);
  await sql`
    update devices as d set last_seen_at = v.at
    from (values ${sql.join(rows)}) as v(id, at)
    where d.id = v.id and (d.last_seen_at is null or d.last_seen_at < v.at)
  `.execute(db);
}
