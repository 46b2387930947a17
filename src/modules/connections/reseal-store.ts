// SQL of resealing: every column the credential cipher writes, read in key order by id and
// replaced one row at a time, only if the row still holds what was read. Servers keep writing
// these rows while the command runs (a renewed credential, a new webhook); a value one of them
// wrote meanwhile is newer than anything this command could write, so it is never overwritten.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

/** Where one kind of sealed value lives (migrations 0009, 0013, 0024). */
export interface SealedColumn {
  table: string;
  id: string;
  sealed: string;
  keyId: string;
}

export const SEALED_COLUMNS = {
  connections: {
    table: 'family_connections',
    id: 'id',
    sealed: 'credentials',
    keyId: 'credentials_key_id',
  },
  webhooks: { table: 'webhooks', id: 'id', sealed: 'secret', keyId: 'secret_key_id' },
  erasureReleases: {
    table: 'erasure_release_secrets',
    id: 'erasure_id',
    sealed: 'sealed',
    keyId: 'key_id',
  },
} as const satisfies Record<string, SealedColumn>;

export interface SealedRow {
  id: string;
  sealed: Buffer;
  keyId: string;
}

interface RawRow {
  id: string;
  sealed: Uint8Array;
  key_id: string;
}

const rowOf = (row: RawRow): SealedRow => ({
  id: row.id,
  sealed: Buffer.from(row.sealed),
  keyId: row.key_id,
});

/** How many values each key id seals (a connection without credentials has none). */
export async function countByKey(db: Db, column: SealedColumn): Promise<Map<string, number>> {
  const { rows } = await sql<{ key_id: string; n: string | number }>`
    select ${sql.ref(column.keyId)} as key_id, count(*) as n from ${sql.table(column.table)}
    where ${sql.ref(column.keyId)} is not null group by 1`.execute(db);
  return new Map(rows.map((row) => [row.key_id, Number(row.n)]));
}

/** The next `limit` values sealed with any key but `currentKeyId`, after `afterId`. */
export async function sealedWithOtherKeys(
  db: Db,
  column: SealedColumn,
  currentKeyId: string,
  afterId: string | undefined,
  limit: number,
): Promise<SealedRow[]> {
  const after = afterId === undefined ? sql`true` : sql`${sql.ref(column.id)} > ${afterId}`;
  const { rows } = await sql<RawRow>`
    select ${sql.ref(column.id)}::text as id, ${sql.ref(column.sealed)} as sealed,
      ${sql.ref(column.keyId)} as key_id
    from ${sql.table(column.table)}
    where ${sql.ref(column.keyId)} <> ${currentKeyId} and ${after}
    order by ${sql.ref(column.id)} limit ${limit}`.execute(db);
  return rows.map(rowOf);
}

/** The row's sealed value as it is now (undefined: the row, or its value, is gone). */
export async function findSealed(
  db: Db,
  column: SealedColumn,
  id: string,
): Promise<SealedRow | undefined> {
  const { rows } = await sql<RawRow>`
    select ${sql.ref(column.id)}::text as id, ${sql.ref(column.sealed)} as sealed,
      ${sql.ref(column.keyId)} as key_id
    from ${sql.table(column.table)}
    where ${sql.ref(column.id)} = ${id} and ${sql.ref(column.keyId)} is not null`.execute(db);
  return rows[0] ? rowOf(rows[0]) : undefined;
}

/**
 * `read` replaced by `next`, if the row still holds `read` (both the bytes and their key):
 * whether it did. Nothing else of the row changes (its updated_at neither: what it holds in
 * the clear is the same).
 */
export async function replaceSealed(
  db: Db,
  column: SealedColumn,
  read: SealedRow,
  next: { sealed: Buffer; keyId: string },
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update ${sql.table(column.table)}
    set ${sql.ref(column.sealed)} = ${next.sealed}, ${sql.ref(column.keyId)} = ${next.keyId}
    where ${sql.ref(column.id)} = ${read.id}
      and ${sql.ref(column.keyId)} = ${read.keyId}
      and ${sql.ref(column.sealed)} = ${read.sealed}
    returning ${sql.ref(column.id)}::text as id`.execute(db);
  return rows.length === 1;
}
