// SQL of family connections. Sealed credentials are selected only by the one function that
// hands them to whoever must use them; every listing leaves them out.
import { type ColumnType, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { reusedStatement } from '../../db/reused-statement.js';
import { type FamilyTenant, familyAnchor, NEWEST_FIRST, withRows } from '../families/store.js';
import type { ChildProfile } from '../oauth/service.js';

declare module '../../db/schema.js' {
  interface Database {
    family_connections: ConnectionTable;
  }
}

/** `credentials_rejected`: the partner refused the stored credentials; renew them (PATCH). */
export type ConnectionStatus = 'connected' | 'pending' | 'credentials_rejected';

export interface ConnectionTable {
  id: string;
  family_id: string;
  platform_id: string;
  status: ConnectionStatus;
  credentials: Buffer | null;
  credentials_key_id: string | null;
  /** jsonb: read back parsed, written as JSON text. */
  profiles: ColumnType<ChildProfile[] | null, string | null, string | null>;
  created_at: Date;
  updated_at: Date;
  last_enforcement_at: Date | null;
  last_enforcement_status: string | null;
}

/** A connection as every read sees it: no credentials, only whether there are some. */
export interface ConnectionRow {
  id: string;
  family_id: string;
  platform_id: string;
  status: ConnectionStatus;
  has_credentials: boolean;
  profiles: ChildProfile[] | null;
  created_at: Date;
  updated_at: Date;
  last_enforcement_at: Date | null;
  last_enforcement_status: string | null;
}

export type NewConnection = Omit<ConnectionTable, 'profiles'> & { profiles: ChildProfile[] | null };

const PUBLIC_COLUMNS = [
  'id',
  'family_id',
  'platform_id',
  'status',
  'profiles',
  'created_at',
  'updated_at',
  'last_enforcement_at',
  'last_enforcement_status',
] as const;

function selectPublic(db: Db) {
  return db
    .selectFrom('family_connections')
    .select(PUBLIC_COLUMNS)
    .select(sql<boolean>`credentials is not null`.as('has_credentials'));
}

export async function insertConnection(db: Db, connection: NewConnection): Promise<void> {
  await db
    .insertInto('family_connections')
    .values({
      ...connection,
      profiles: connection.profiles === null ? null : JSON.stringify(connection.profiles),
    })
    .execute();
}

export async function findConnection(db: Db, id: string): Promise<ConnectionRow | undefined> {
  return selectPublic(db).where('id', '=', id).executeTakeFirst();
}

/** Read by every policy change (is there anything to enforce on?): compiled once. */
const connectionsOf = reusedStatement(['familyId'], (db, { familyId }) =>
  selectPublic(db)
    .where('family_id', '=', familyId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc'),
);

export async function listConnections(db: Db, familyId: string): Promise<ConnectionRow[]> {
  return connectionsOf.execute(db, { familyId });
}

/** A family's connections, newest first, with the family's facts: one statement. */
export async function listConnectionsRead(db: Db, familyId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    familyAnchor(db, familyId, tenant),
    selectPublic(db).where('family_id', '=', familyId),
    NEWEST_FIRST,
  ).execute();
}

/** Whether there was a row to delete (a concurrent delete may have taken it first). */
export async function deleteConnection(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('family_connections').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The sealed credentials of one connection, for the code that enforces through it. */
export async function findSealedCredentials(
  db: Db,
  id: string,
): Promise<{ credentials: Buffer; credentials_key_id: string } | undefined> {
  const row = await db
    .selectFrom('family_connections')
    .select(['credentials', 'credentials_key_id'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row?.credentials || !row.credentials_key_id) {
    return undefined;
  }
  return { credentials: Buffer.from(row.credentials), credentials_key_id: row.credentials_key_id };
}

/** After an enforcement run: when it last went through this connection and how it ended. */
export async function recordLastEnforcement(
  db: Db,
  id: string,
  at: Date,
  outcome: { status: string; connection: ConnectionStatus | undefined },
): Promise<void> {
  let update = db
    .updateTable('family_connections')
    .set({ last_enforcement_at: at, last_enforcement_status: outcome.status })
    .where('id', '=', id);
  if (outcome.connection === 'credentials_rejected') {
    update = update.set({ status: 'credentials_rejected', updated_at: at });
  } else if (outcome.connection === 'connected') {
    // Only a refused connection comes back; a pending one stays pending.
    update = update.set({
      status: sql<ConnectionStatus>`case when status = 'credentials_rejected' then 'connected' else status end`,
    });
  }
  await update.execute();
}

/** New sealed credentials in place of the old ones, and the status they give. */
export async function updateCredentials(
  db: Db,
  id: string,
  change: { sealed: { sealed: Buffer; keyId: string }; status: ConnectionStatus; at: Date },
): Promise<void> {
  await db
    .updateTable('family_connections')
    .set({
      credentials: change.sealed.sealed,
      credentials_key_id: change.sealed.keyId,
      status: change.status,
      updated_at: change.at,
    })
    .where('id', '=', id)
    .execute();
}
