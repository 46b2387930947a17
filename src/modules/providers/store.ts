// SQL of the provider directory (CONTRACT.md §9 seeds it; federation adds to it).
import type { ColumnType } from 'kysely';
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    providers: ProviderTable;
  }
}

export interface ConnectConfig {
  name: string;
  authorize_url: string;
  token_url: string;
  profiles_url: string;
  scopes: string[];
}

export interface ProviderTable {
  did: string;
  name: string;
  /** jsonb: read back parsed, written as JSON text. */
  connect_config: ColumnType<ConnectConfig | null, string | null, string | null>;
  created_at: Date;
  updated_at: Date;
}

export interface ProviderRow {
  did: string;
  name: string;
  connect_config: ConnectConfig | null;
}

export async function findProvider(db: Db, did: string): Promise<ProviderRow | undefined> {
  return db
    .selectFrom('providers')
    .select(['did', 'name', 'connect_config'])
    .where('did', '=', did)
    .executeTakeFirst();
}

/** Creates a seeded entry if missing; never overwrites what a provider published since. */
export async function seedProvider(
  db: Db,
  entry: { did: string; name: string },
  at: Date,
): Promise<void> {
  await db
    .insertInto('providers')
    .values({ ...entry, connect_config: null, created_at: at, updated_at: at })
    .onConflict((conflict) => conflict.column('did').doNothing())
    .execute();
}

/** A provider publishes (or replaces) its connect config; the row is created if needed. */
export async function publishConnectConfig(
  db: Db,
  entry: { did: string; name: string },
  config: ConnectConfig,
  at: Date,
): Promise<{ updated_at: Date }> {
  const json = JSON.stringify(config);
  return db
    .insertInto('providers')
    .values({ ...entry, connect_config: json, created_at: at, updated_at: at })
    .onConflict((conflict) =>
      conflict
        .column('did')
        .doUpdateSet({ name: entry.name, connect_config: json, updated_at: at }),
    )
    .returning('updated_at')
    .executeTakeFirstOrThrow();
}
