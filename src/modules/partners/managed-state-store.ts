// SQL of what Haven manages on each partner profile (migration 0016). One row per connection,
// gone with it.
import { type ColumnType, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { hasStoppedBeatingSql } from '../../jobs/liveness.js';

declare module '../../db/schema.js' {
  interface Database {
    partner_managed_state: ManagedStateTable;
  }
}

/** A setting Haven changed: what it found there first, and what it set. */
export interface ManagedSetting {
  original: unknown;
  applied: unknown;
}

export interface ManagedState {
  /** List entries Haven added (keys such as `denylist:example.com`), never the parent's own. */
  items: string[];
  /** Settings Haven changed, by key (such as `parentalControl.safeSearch`). */
  settings: Record<string, ManagedSetting>;
}

export interface ManagedStateTable {
  connection_id: string;
  platform_id: string;
  profile_id: string;
  state: ColumnType<ManagedState, string, string>;
  updated_at: Date;
  lease_owner: ColumnType<string | null, string | null | undefined, string | null>;
  lease_instance: ColumnType<string | null, string | null | undefined, string | null>;
  lease_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export const EMPTY_STATE: ManagedState = { items: [], settings: {} };

/** The record for this connection's profile; a record of another profile does not count. */
export async function loadManagedState(
  db: Db,
  connectionId: string,
  profileId: string,
): Promise<ManagedState> {
  const row = await db
    .selectFrom('partner_managed_state')
    .select(['profile_id', 'state'])
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
  if (!row || row.profile_id !== profileId) {
    return { items: [], settings: {} };
  }
  const state = typeof row.state === 'string' ? JSON.parse(row.state) : row.state;
  return { items: state.items ?? [], settings: state.settings ?? {} };
}

export async function saveManagedState(
  db: Db,
  row: { connectionId: string; platformId: string; profileId: string; state: ManagedState },
  at: Date,
): Promise<void> {
  const values = {
    connection_id: row.connectionId,
    platform_id: row.platformId,
    profile_id: row.profileId,
    state: JSON.stringify(row.state),
    updated_at: at,
  };
  await db
    .insertInto('partner_managed_state')
    .values(values)
    .onConflict((conflict) =>
      conflict.column('connection_id').doUpdateSet({
        profile_id: values.profile_id,
        state: values.state,
        updated_at: values.updated_at,
      }),
    )
    .execute();
}

/**
 * Takes the connection's lease if no live run holds it: true when taken. The row is made
 * first if the connection has none yet (an empty record of this profile).
 */
export async function takeLease(
  db: Db,
  row: { connectionId: string; platformId: string; profileId: string },
  lease: { owner: string; now: Date; until: Date; instance: string; staleSeconds: number },
): Promise<boolean> {
  await db
    .insertInto('partner_managed_state')
    .values({
      connection_id: row.connectionId,
      platform_id: row.platformId,
      profile_id: row.profileId,
      state: JSON.stringify(EMPTY_STATE),
      updated_at: lease.now,
    })
    .onConflict((conflict) => conflict.column('connection_id').doNothing())
    .execute();
  const taken = await db
    .updateTable('partner_managed_state')
    .set({ lease_owner: lease.owner, lease_until: lease.until, lease_instance: lease.instance })
    .where('connection_id', '=', row.connectionId)
    .where((eb) =>
      eb.or([
        eb('lease_until', 'is', null),
        eb('lease_until', '<', lease.now),
        // Its run died with its process: free now, not at the end of the lease.
        hasStoppedBeatingSql(sql.ref('partner_managed_state.lease_instance'), lease.staleSeconds),
      ]),
    )
    .returning('connection_id')
    .executeTakeFirst();
  return taken !== undefined;
}

export async function releaseLease(db: Db, connectionId: string, owner: string): Promise<void> {
  await db
    .updateTable('partner_managed_state')
    .set({ lease_owner: null, lease_until: null, lease_instance: null })
    .where('connection_id', '=', connectionId)
    .where('lease_owner', '=', owner)
    .execute();
}
