// SQL of the development issuer's key.
import type { Db } from '../db/connect.js';

declare module '../db/schema.js' {
  interface Database {
    dev_issuer_keys: DevIssuerKeyTable;
  }
}

export interface DevIssuerKeyTable {
  slot: number;
  kid: string;
  private_key_pem: string;
  public_jwk: Record<string, unknown>;
  created_at: Date;
}

export type DevIssuerKeyRow = Omit<DevIssuerKeyTable, 'slot'>;

/** Keeps the first key written; a concurrent writer's key is discarded. */
export async function insertKeyIfAbsent(db: Db, key: DevIssuerKeyRow): Promise<void> {
  await db
    .insertInto('dev_issuer_keys')
    .values({ slot: 1, ...key, public_jwk: JSON.stringify(key.public_jwk) as never })
    .onConflict((conflict) => conflict.column('slot').doNothing())
    .execute();
}

export async function findKey(db: Db): Promise<DevIssuerKeyRow | undefined> {
  return db
    .selectFrom('dev_issuer_keys')
    .select(['kid', 'private_key_pem', 'public_jwk', 'created_at'])
    .where('slot', '=', 1)
    .executeTakeFirst();
}
