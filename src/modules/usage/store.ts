// SQL of usage rollups and last-used stamps. Increments are additive upserts, so any number
// of instances can flush into the same rows without losing or doubling a count.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    developer_usage: DeveloperUsageTable;
  }
}

export interface DeveloperUsageTable {
  id: string;
  key_id: string;
  org_id: string;
  hour: Date;
  endpoint: string;
  status_2xx: number;
  status_4xx: number;
  status_5xx: number;
  total_requests: number;
}

export type UsageIncrement = Omit<DeveloperUsageTable, 'id'>;
export type UsageRow = DeveloperUsageTable;

export interface LastUse {
  id: string;
  at: Date;
  ip: string;
}

export async function addUsage(db: Db, increments: UsageIncrement[]): Promise<void> {
  if (increments.length === 0) {
    return;
  }
  await db
    .insertInto('developer_usage')
    .values(increments.map((row) => ({ id: randomUUID(), ...row })))
    .onConflict((conflict) =>
      conflict.columns(['key_id', 'hour', 'endpoint']).doUpdateSet({
        status_2xx: sql`developer_usage.status_2xx + excluded.status_2xx`,
        status_4xx: sql`developer_usage.status_4xx + excluded.status_4xx`,
        status_5xx: sql`developer_usage.status_5xx + excluded.status_5xx`,
        total_requests: sql`developer_usage.total_requests + excluded.total_requests`,
      }),
    )
    .execute();
}

/** Moves last_used forward only: an instance flushing late never writes an older stamp. */
export async function stampKeysUsed(db: Db, uses: LastUse[]): Promise<void> {
  for (const use of uses) {
    await db
      .updateTable('developer_api_keys')
      .set({ last_used_at: use.at, last_used_ip: use.ip })
      .where('id', '=', use.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', use.at)]))
      .execute();
  }
}

export async function stampMcpTokensUsed(db: Db, uses: LastUse[]): Promise<void> {
  for (const use of uses) {
    await db
      .updateTable('mcp_tokens')
      .set({ last_used_at: use.at })
      .where('id', '=', use.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', use.at)]))
      .execute();
  }
}

export async function listUsage(
  db: Db,
  filter: { orgId: string; since: Date; keyId?: string },
): Promise<UsageRow[]> {
  let query = db
    .selectFrom('developer_usage')
    .selectAll()
    .where('org_id', '=', filter.orgId)
    .where('hour', '>=', filter.since);
  if (filter.keyId) {
    query = query.where('key_id', '=', filter.keyId);
  }
  return query.orderBy('hour', 'desc').orderBy('endpoint').orderBy('key_id').execute();
}
