// SQL of trust-list entries and of the issued trust lists.
import { type ColumnType, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { OkpPublicJwk } from '../../ocss/public-jwk.js';

declare module '../../db/schema.js' {
  interface Database {
    ocss_entries: EntryTable;
    trust_list_issues: TrustListIssueTable;
  }
}

export type EntryEntity = 'steward' | 'provider' | 'advisor';
export type EntryTier = 'verified' | 'provisional';
export type EntryStatus = 'active' | 'suspended' | 'revoked';

export type PublicJwk = OkpPublicJwk;

export interface EntryTable {
  did: string;
  entity: EntryEntity;
  display_name: string;
  roles: ColumnType<string[], string, string>;
  tier: EntryTier;
  status: EntryStatus;
  public_jwk: ColumnType<PublicJwk, string, string>;
  key_id: string;
  registered_at: Date;
  updated_at: Date;
}

export interface EntryRow {
  did: string;
  entity: EntryEntity;
  display_name: string;
  roles: string[];
  tier: EntryTier;
  status: EntryStatus;
  public_jwk: PublicJwk;
  key_id: string;
  registered_at: Date;
  updated_at: Date;
}

export interface TrustListIssueTable {
  number: number;
  issued_at: Date;
  entries_digest: string;
  body: string;
}

/** Serialises re-issues across processes (a CLI beside running servers included). */
const ISSUE_LOCK = 0x0c55_7157;

function toColumns(entry: EntryRow) {
  return {
    ...entry,
    roles: JSON.stringify(entry.roles),
    public_jwk: JSON.stringify(entry.public_jwk),
  };
}

/** Create-only: false when the DID (or its key_id) is already listed. */
export async function insertEntry(db: Db, entry: EntryRow): Promise<boolean> {
  const result = await db
    .insertInto('ocss_entries')
    .values(toColumns(entry))
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/**
 * Seeded entries are created once; later starts only follow a change of their key (a new
 * OCSS_STEWARD_KEY, say). Tier and status stay as an operator may have set them.
 */
export async function seedEntry(db: Db, entry: EntryRow): Promise<void> {
  const columns = toColumns(entry);
  await db
    .insertInto('ocss_entries')
    .values(columns)
    .onConflict((conflict) =>
      conflict
        .column('did')
        .doUpdateSet({
          public_jwk: columns.public_jwk,
          key_id: columns.key_id,
          updated_at: columns.updated_at,
        })
        .where('ocss_entries.key_id', '!=', columns.key_id),
    )
    .execute();
}

export async function findEntry(db: Db, did: string): Promise<EntryRow | undefined> {
  return db.selectFrom('ocss_entries').selectAll().where('did', '=', did).executeTakeFirst();
}

export async function listEntries(db: Db): Promise<EntryRow[]> {
  return db.selectFrom('ocss_entries').selectAll().orderBy('did').execute();
}

export async function updateEntry(
  db: Db,
  did: string,
  changes: Partial<Pick<EntryRow, 'tier' | 'status'>>,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('ocss_entries')
    .set({ ...changes, updated_at: at })
    .where('did', '=', did)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function latestIssue(db: Db): Promise<TrustListIssueTable | undefined> {
  return db
    .selectFrom('trust_list_issues')
    .selectAll()
    .orderBy('number', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function latestIssueNumber(db: Db): Promise<number> {
  const row = await db
    .selectFrom('trust_list_issues')
    .select((eb) => eb.fn.max('number').as('number'))
    .executeTakeFirst();
  return Number(row?.number ?? 0);
}

/**
 * Writes issue n+1 when the entries' digest differs from the latest issue's, under a lock
 * so that two writers cannot both take the same number. `build` makes the body for the
 * number and time it is given.
 */
export async function issueIfChanged(
  db: Db,
  digest: string,
  at: Date,
  build: (number: number, issuedAt: Date) => string,
): Promise<TrustListIssueTable> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${ISSUE_LOCK})`.execute(trx);
    const latest = await latestIssue(trx);
    if (latest && latest.entries_digest === digest) {
      return latest;
    }
    const number = (latest?.number ?? 0) + 1;
    const issue = { number, issued_at: at, entries_digest: digest, body: build(number, at) };
    await trx.insertInto('trust_list_issues').values(issue).execute();
    return issue;
  });
}
