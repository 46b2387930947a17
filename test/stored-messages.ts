// The webhook messages stored for a family's endpoints, read from the database: what the
// change committed, whether or not a delivery has been attempted yet.
import type { Db } from '../src/db/connect.js';

export interface StoredMessage {
  type: string;
  data: Record<string, unknown>;
}

/** Every message once (a retried delivery repeats its message), oldest first. */
export async function storedMessages(db: Db, familyId: string): Promise<StoredMessage[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
    .select(['webhook_deliveries.payload'])
    .where('webhooks.family_id', '=', familyId)
    .where('webhook_deliveries.attempt', '=', 1)
    .orderBy('webhook_deliveries.created_at')
    .orderBy('webhook_deliveries.seq')
    .execute();
  return rows.map((row) => JSON.parse(row.payload) as StoredMessage);
}

/** The `data` of the family's stored messages of `type`, oldest first. */
export async function storedData(db: Db, familyId: string, type: string) {
  return (await storedMessages(db, familyId))
    .filter((message) => message.type === type)
    .map((message) => message.data);
}
