// SQL of developer API keys. Only the SHA-256 of a secret is ever written.

import type { Environment } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    developer_api_keys: DeveloperApiKeyTable;
  }
}

export interface DeveloperApiKeyTable {
  id: string;
  org_id: string;
  created_by: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  environment: Environment;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  last_used_ip: string | null;
  created_at: Date;
}

export type ApiKeyRow = DeveloperApiKeyTable;

export async function insertApiKey(db: Db, key: ApiKeyRow): Promise<void> {
  await db.insertInto('developer_api_keys').values(key).execute();
}

export async function listApiKeys(db: Db, orgId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('developer_api_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findApiKey(db: Db, orgId: string, keyId: string) {
  return db
    .selectFrom('developer_api_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .executeTakeFirst();
}

export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('developer_api_keys')
    .selectAll()
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/**
 * Sets revoked_at once; returns the row either way (undefined when there is none), and
 * whether this call revoked it (false: it already was).
 */
export async function revokeApiKey(db: Db, orgId: string, keyId: string, now: Date) {
  const updated = await db
    .updateTable('developer_api_keys')
    .set({ revoked_at: now })
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const row = await findApiKey(db, orgId, keyId);
  return row && { row, revokedNow: Number(updated.numUpdatedRows) > 0 };
}
