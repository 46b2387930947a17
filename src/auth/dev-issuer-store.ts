// SQL of the development issuer's key.
import type { JWK } from 'jose';
import type { ColumnType } from 'kysely';
import type { Db } from '../db/connect.js';

declare module '../db/schema.js' {
  interface Database {
    dev_issuer_keys: DevIssuerKeyTable;
  }
}

export interface DevIssuerKeyTable {
  /** Always 1 (a check constraint): the single row two starting processes race for. */
  slot: number;
  kid: string;
  private_key_pem: string;
  /** jsonb: both drivers hand back the parsed object; written as JSON text. */
  public_jwk: ColumnType<JWK, string, string>;
  created_at: Date;
}

export interface DevIssuerKey {
  kid: string;
  private_key_pem: string;
  public_jwk: JWK;
  created_at: Date;
}

/** Keeps the first key written; a concurrent writer's key is discarded. */
export async function insertKeyIfAbsent(db: Db, key: DevIssuerKey): Promise<void> {
  await db
    .insertInto('dev_issuer_keys')
    .values({ slot: 1, ...key, public_jwk: JSON.stringify(key.public_jwk) })
    .onConflict((conflict) => conflict.column('slot').doNothing())
    .execute();
}

export async function findKey(db: Db): Promise<DevIssuerKey | undefined> {
  return db
    .selectFrom('dev_issuer_keys')
    .select(['kid', 'private_key_pem', 'public_jwk', 'created_at'])
    .where('slot', '=', 1)
    .executeTakeFirst();
}
