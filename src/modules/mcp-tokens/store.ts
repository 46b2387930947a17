// SQL of MCP tokens. Only the SHA-256 of a token is ever written.
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    mcp_tokens: McpTokenTable;
  }
}

export interface McpTokenTable {
  id: string;
  user_id: string;
  family_id: string;
  label: string;
  token_prefix: string;
  token_hash: string;
  last_used_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
}

export type McpTokenRow = McpTokenTable;

export async function insertMcpToken(db: Db, token: McpTokenRow): Promise<void> {
  await db.insertInto('mcp_tokens').values(token).execute();
}

export async function listMcpTokens(db: Db, userId: string): Promise<McpTokenRow[]> {
  return db
    .selectFrom('mcp_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findMcpTokenByHash(db: Db, tokenHash: string) {
  return db
    .selectFrom('mcp_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** The caller's token (revoked now, or before: `revokedNow` says which), or undefined. */
export async function revokeMcpToken(db: Db, userId: string, id: string, now: Date) {
  const revoked = await db
    .updateTable('mcp_tokens')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const row = await db
    .selectFrom('mcp_tokens')
    .select(['id', 'token_hash', 'family_id'])
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { ...row, revokedNow: Number(revoked.numUpdatedRows) > 0 };
}
