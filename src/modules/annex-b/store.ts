// SQL of the frozen Annex B editions (migrations/0010): written once, read forever.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    annex_b_editions: AnnexBEditionTable;
  }
}

export interface AnnexBEditionTable {
  edition: number;
  frozen_at: Date;
  /** The canonical JSON artifact, exactly the bytes served. */
  artifact: string;
  /** Hex SHA-256 of the artifact's UTF-8 bytes. */
  sha256: string;
}

export type EditionRow = AnnexBEditionTable;
export type EditionSummary = Omit<EditionRow, 'artifact'>;

/** Any fixed number works; every Haven process (server or CLI) must use the same one. */
const FREEZE_LOCK = 0x0a22eb;

/**
 * Serialises freezes across processes until the transaction ends, so the number read next
 * is still free when it is written (no duplicate, and no gap since nothing is taken early).
 */
export async function lockEditionNumbers(trx: Db): Promise<void> {
  await sql`select pg_advisory_xact_lock(${FREEZE_LOCK})`.execute(trx);
}

export async function findLatestEditionNumber(db: Db): Promise<number> {
  const row = await db
    .selectFrom('annex_b_editions')
    .select((eb) => eb.fn.max('edition').as('latest'))
    .executeTakeFirst();
  return row?.latest ?? 0;
}

export async function insertEdition(db: Db, row: EditionRow): Promise<void> {
  await db.insertInto('annex_b_editions').values(row).execute();
}

export async function findEdition(db: Db, edition: number): Promise<EditionRow | undefined> {
  return db
    .selectFrom('annex_b_editions')
    .selectAll()
    .where('edition', '=', edition)
    .executeTakeFirst();
}

export async function listEditions(db: Db): Promise<EditionSummary[]> {
  return db
    .selectFrom('annex_b_editions')
    .select(['edition', 'frozen_at', 'sha256'])
    .orderBy('edition')
    .execute();
}
