// Every row Haven holds about a family or a child, deleted inside the erasure's transaction
// and counted per table (CONTRACT.md §12.3). The erasure reaches into other modules' tables
// on purpose: one place lists everything "about the subject", so a table that joins later has
// one place to be added (and erasure.test.ts scans every table for the subject's ids).
//
// Deleted leaves first, table by table, each count the statement's own: the foreign keys'
// ON DELETE CASCADE would remove the same rows, but uncounted. The parents others insert
// under (the family, its children, policies, webhooks and connections) are locked first, so
// no row joins between a table's count and its parent's delete: a concurrent insert waits on
// the lock and then fails its foreign key.
import { type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../http/errors.js';
import { allowAuditRemoval, removeChains } from '../audit/store.js';

export type ErasedCounts = Record<string, number>;

/** What must be told elsewhere once the rows are gone (secret caches of every instance). */
export interface ErasedSecrets {
  deviceKeyHashes: string[];
  mcpTokenHashes: string[];
}

const counted = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);

/**
 * Completed Idempotency-Key receipts whose path or stored answer names one of `ids`: a
 * replay would hand back what the erasure removed (a child as it was created). A receipt
 * still in flight is a request running now (this very DELETE's, if it carries a key).
 */
async function eraseReceipts(db: Db, ids: readonly string[]): Promise<number> {
  return counted(
    await db
      .deleteFrom('idempotency_keys')
      .where('state', '=', 'completed')
      .where((eb) =>
        eb.or(
          ids.flatMap((id): Expression<SqlBool>[] => [
            sql<boolean>`strpos(path, ${id}) > 0`,
            sql<boolean>`strpos(coalesce(response_body, ''), ${id}) > 0`,
          ]),
        ),
      )
      .executeTakeFirst(),
  );
}

/**
 * Locks what others write under: the family's partner records, so a run that claims an entry
 * on a profile (it records the claim before sending) does so either before the erasure reads
 * the record or not at all.
 */
async function lockPartnerRecords(db: Db, familyId: string): Promise<void> {
  await db
    .selectFrom('partner_managed_state')
    .select('connection_id')
    .where(
      'connection_id',
      'in',
      db.selectFrom('family_connections').select('id').where('family_id', '=', familyId),
    )
    .forUpdate()
    .execute();
}

/** Locks the child and what is written under it, before anything is read; 404 if gone. */
export async function lockChild(db: Db, child: { id: string; familyId: string }): Promise<void> {
  const locked = await db
    .selectFrom('children')
    .select('id')
    .where('id', '=', child.id)
    .forUpdate()
    .executeTakeFirst();
  if (!locked) {
    throw new NotFoundError('child not found');
  }
  await db
    .selectFrom('policies')
    .select('id')
    .where('child_id', '=', child.id)
    .forUpdate()
    .execute();
  await lockPartnerRecords(db, child.familyId);
}

/** The child's rows (locked by `lockChild`), counted per table. */
export async function eraseChildRows(
  db: Db,
  child: { id: string; familyId: string },
): Promise<{ erased: ErasedCounts; secrets: ErasedSecrets }> {
  const erased: ErasedCounts = {};
  erased.device_reports = counted(
    await db.deleteFrom('device_reports').where('child_id', '=', child.id).executeTakeFirst(),
  );
  erased.viewing_history = counted(
    await db.deleteFrom('viewing_history').where('child_id', '=', child.id).executeTakeFirst(),
  );
  const devices = await db
    .deleteFrom('devices')
    .where('child_id', '=', child.id)
    .returning('key_hash')
    .execute();
  erased.devices = devices.length;
  erased.age_signals = counted(
    await db.deleteFrom('age_signals').where('child_id', '=', child.id).executeTakeFirst(),
  );
  erased.enforcement_jobs = counted(
    await db.deleteFrom('enforcement_jobs').where('child_id', '=', child.id).executeTakeFirst(),
  );
  const policies = db.selectFrom('policies').select('id').where('child_id', '=', child.id);
  erased.policy_rules = counted(
    await db.deleteFrom('policy_rules').where('policy_id', 'in', policies).executeTakeFirst(),
  );
  erased.policies = counted(
    await db.deleteFrom('policies').where('child_id', '=', child.id).executeTakeFirst(),
  );
  // What Haven applied on the family's partner profiles (one record per connection, the
  // record the release converges from: the erasure's job holds it sealed from here on).
  erased.partner_managed_state = counted(
    await db
      .deleteFrom('partner_managed_state')
      .where(
        'connection_id',
        'in',
        db.selectFrom('family_connections').select('id').where('family_id', '=', child.familyId),
      )
      .executeTakeFirst(),
  );
  // The messages the family's endpoints were sent about the child (its name, its reports):
  // rows about the child, though the endpoints are the family's.
  erased.webhook_deliveries = counted(
    await db
      .deleteFrom('webhook_deliveries')
      .where(
        'webhook_id',
        'in',
        db.selectFrom('webhooks').select('id').where('family_id', '=', child.familyId),
      )
      .where((eb) =>
        eb.or([
          sql<boolean>`payload::jsonb -> 'data' ->> 'child_id' = ${child.id}`,
          sql<boolean>`payload::jsonb -> 'data' ->> 'id' = ${child.id}`,
        ]),
      )
      .executeTakeFirst(),
  );
  erased.idempotency_keys = await eraseReceipts(db, [child.id]);
  erased.children = counted(
    await db.deleteFrom('children').where('id', '=', child.id).executeTakeFirst(),
  );
  return {
    erased,
    secrets: { deviceKeyHashes: devices.map((d) => d.key_hash), mcpTokenHashes: [] },
  };
}

function familyRows(db: Db, familyId: string) {
  const children = db.selectFrom('children').select('id').where('family_id', '=', familyId);
  return {
    children,
    policies: db.selectFrom('policies').select('id').where('child_id', 'in', children),
    webhooks: db.selectFrom('webhooks').select('id').where('family_id', '=', familyId),
    connections: db.selectFrom('family_connections').select('id').where('family_id', '=', familyId),
  };
}

/**
 * Locks the family and what is written under it, before anything is read; 404 if gone.
 * Answers its children's ids.
 */
export async function lockFamily(db: Db, familyId: string): Promise<string[]> {
  const locked = await db
    .selectFrom('families')
    .select('id')
    .where('id', '=', familyId)
    .forUpdate()
    .executeTakeFirst();
  if (!locked) {
    throw new NotFoundError('family not found');
  }
  const rows = familyRows(db, familyId);
  const childIds = (await rows.children.forUpdate().execute()).map((row) => row.id);
  await rows.policies.forUpdate().execute();
  await rows.webhooks.forUpdate().execute();
  await rows.connections.forUpdate().execute();
  await lockPartnerRecords(db, familyId);
  return childIds;
}

/** The family's rows (locked by `lockFamily`), its children's and its audit chain, counted. */
export async function eraseFamilyRows(
  db: Db,
  familyId: string,
  childIds: readonly string[],
): Promise<{ erased: ErasedCounts; secrets: ErasedSecrets }> {
  const { children, policies, webhooks, connections } = familyRows(db, familyId);
  const erased: ErasedCounts = {};
  erased.webhook_deliveries = counted(
    await db
      .deleteFrom('webhook_deliveries')
      .where('webhook_id', 'in', webhooks)
      .executeTakeFirst(),
  );
  erased.webhooks = counted(
    await db.deleteFrom('webhooks').where('family_id', '=', familyId).executeTakeFirst(),
  );
  erased.device_reports = counted(
    await db.deleteFrom('device_reports').where('child_id', 'in', children).executeTakeFirst(),
  );
  erased.viewing_history = counted(
    await db.deleteFrom('viewing_history').where('child_id', 'in', children).executeTakeFirst(),
  );
  const devices = await db
    .deleteFrom('devices')
    .where('family_id', '=', familyId)
    .returning('key_hash')
    .execute();
  erased.devices = devices.length;
  erased.age_signals = counted(
    await db.deleteFrom('age_signals').where('child_id', 'in', children).executeTakeFirst(),
  );
  erased.enforcement_jobs = counted(
    await db.deleteFrom('enforcement_jobs').where('family_id', '=', familyId).executeTakeFirst(),
  );
  erased.policy_rules = counted(
    await db.deleteFrom('policy_rules').where('policy_id', 'in', policies).executeTakeFirst(),
  );
  erased.policies = counted(
    await db.deleteFrom('policies').where('child_id', 'in', children).executeTakeFirst(),
  );
  erased.partner_managed_state = counted(
    await db
      .deleteFrom('partner_managed_state')
      .where('connection_id', 'in', connections)
      .executeTakeFirst(),
  );
  // With their sealed credentials: what the release needs of them is in the erasure's job.
  erased.family_connections = counted(
    await db.deleteFrom('family_connections').where('family_id', '=', familyId).executeTakeFirst(),
  );
  erased.sandbox_platform_failures = counted(
    await db
      .deleteFrom('sandbox_platform_failures')
      .where('family_id', '=', familyId)
      .executeTakeFirst(),
  );
  const tokens = await db
    .deleteFrom('mcp_tokens')
    .where('family_id', '=', familyId)
    .returning('token_hash')
    .execute();
  erased.mcp_tokens = tokens.length;
  erased.family_members = counted(
    await db.deleteFrom('family_members').where('family_id', '=', familyId).executeTakeFirst(),
  );
  erased.children = counted(
    await db.deleteFrom('children').where('family_id', '=', familyId).executeTakeFirst(),
  );
  erased.idempotency_keys = await eraseReceipts(db, [familyId, ...childIds]);
  // The family's audit chain goes whole (CONTRACT.md §12.1: erasure removes a whole chain);
  // the database refuses the delete unless this transaction says it is one of the two acts
  // allowed to remove entries.
  await allowAuditRemoval(db);
  erased.audit_entries = await removeChains(db, [familyId]);
  // Its test clock stays (the caller's); the family's attachment to it goes with the row.
  erased.families = counted(
    await db.deleteFrom('families').where('id', '=', familyId).executeTakeFirst(),
  );
  return {
    erased,
    secrets: {
      deviceKeyHashes: devices.map((d) => d.key_hash),
      mcpTokenHashes: tokens.map((t) => t.token_hash),
    },
  };
}
