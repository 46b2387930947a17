// SQL of trust-list entries and of the issued trust lists.
import { type ColumnType, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { OkpPublicJwk } from '../../ocss/public-jwk.js';

declare module '../../db/schema.js' {
  interface Database {
    ocss_entries: EntryTable;
    trust_list_issues: TrustListIssueTable;
    steward_keys: StewardKeyTable;
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
  /** The steward key_id (<did>#<kid>) that signed it. */
  key_id: string;
}

export interface StewardKeyTable {
  kid: string;
  did: string;
  public_jwk: ColumnType<PublicJwk, string, string>;
  first_signed_at: Date;
  retired_at: Date | null;
}

export interface StewardKeyRow {
  kid: string;
  did: string;
  public_jwk: PublicJwk;
  first_signed_at: Date;
  retired_at: Date | null;
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

/** Serialises issuing across processes until the transaction ends. */
export async function lockIssues(trx: Db): Promise<void> {
  await sql`select pg_advisory_xact_lock(${ISSUE_LOCK})`.execute(trx);
}

/**
 * The steward's entry publishes the key that signs: a start (or a re-issue) with another
 * key moves it, which changes the entries and so makes a new issue.
 */
export async function pinStewardKey(
  trx: Db,
  steward: { did: string; jwk: PublicJwk; keyId: string },
  at: Date,
): Promise<void> {
  await trx
    .updateTable('ocss_entries')
    .set({ public_jwk: JSON.stringify(steward.jwk), key_id: steward.keyId, updated_at: at })
    .where('did', '=', steward.did)
    .where('entity', '=', 'steward')
    .where('key_id', '!=', steward.keyId)
    .execute();
}

export async function insertIssue(trx: Db, issue: TrustListIssueTable): Promise<void> {
  await trx.insertInto('trust_list_issues').values(issue).execute();
}

/** The key that signed the newest issue is the current one; every other one is retired. */
export async function recordStewardSigner(
  trx: Db,
  key: { kid: string; did: string; jwk: PublicJwk },
  at: Date,
): Promise<void> {
  await trx
    .updateTable('steward_keys')
    .set({ retired_at: at })
    .where('kid', '!=', key.kid)
    .where('retired_at', 'is', null)
    .execute();
  await trx
    .insertInto('steward_keys')
    .values({
      kid: key.kid,
      did: key.did,
      public_jwk: JSON.stringify(key.jwk),
      first_signed_at: at,
      retired_at: null,
    })
    .onConflict((conflict) => conflict.column('kid').doUpdateSet({ retired_at: null }))
    .execute();
}

export async function listStewardKeys(db: Db): Promise<StewardKeyRow[]> {
  return db.selectFrom('steward_keys').selectAll().execute();
}
