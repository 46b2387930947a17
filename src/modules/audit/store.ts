// SQL of the audit log (CONTRACT.md §12.1; migrations/0023_audit_log.sql).
import { type ColumnType, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { StatedAuditEntry } from '../../db/transaction-effects.js';
import type { AuditActorType } from './actor.js';
import { type AuditEntry, entryHash, GENESIS_HASH } from './entry.js';

declare module '../../db/schema.js' {
  interface Database {
    audit_chains: AuditChainTable;
    audit_entries: AuditEntryTable;
  }
}

export type ChainKind = 'family' | 'org';

export interface AuditChainTable {
  chain_id: string;
  kind: ChainKind;
  last_seq: number | string;
  last_hash: string;
}

export interface AuditEntryTable {
  id: string;
  chain_id: string;
  seq: number | string;
  occurred_at: ColumnType<Date, Date | string, never>;
  family_id: string | null;
  org_id: string | null;
  actor_type: AuditActorType;
  actor_id: string;
  actor_label: string;
  action: string;
  target_type: string;
  target_id: string;
  request_id: string | null;
  changes: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

export interface Chain {
  id: string;
  kind: ChainKind;
}

/** The statement naming an actor without a personal value (docs "What an audit entry says"). */
function labelOf(entry: StatedAuditEntry, chain: Chain): RawBuilder<string> {
  const { actor } = entry;
  if (actor.label !== undefined) {
    return sql<string>`${actor.label}::text`;
  }
  switch (actor.type) {
    case 'api_key':
      return sql<string>`(select key_prefix from api_keys where id = ${actor.id})`;
    case 'mcp_token':
      return sql<string>`(select token_prefix from mcp_tokens where id = ${actor.id})`;
    case 'device':
      return sql<string>`(select key_prefix from devices where id = ${actor.id})`;
    case 'user':
      return chain.kind === 'family'
        ? sql<string>`(select role from family_members where family_id = ${chain.id} and user_id = ${actor.id})`
        : sql<string>`(select role from developer_org_members where org_id = ${chain.id} and user_id = ${actor.id})`;
    case 'system':
      return sql<string>`'haven'::text`;
  }
}

/** A family on a test clock lives by it: its entries are stamped with the clock's time. */
function clockTimeOf(chain: Chain): RawBuilder<Date | null> {
  return chain.kind === 'family'
    ? sql<Date | null>`(select tc.frozen_time from families f join test_clocks tc on tc.id = f.test_clock_id where f.id = ${chain.id})`
    : sql<Date | null>`null::timestamptz`;
}

/**
 * Appends `stated` (all of one actor) to the chain, inside the caller's transaction. Taking
 * the seqs locks the chain's row until the commit, so concurrent writers of one chain follow
 * each other and `seq` has no gap.
 */
export async function appendToChain(
  trx: Kysely<Database>,
  chain: Chain,
  stated: readonly StatedAuditEntry[],
  ids: () => string,
  now: Date,
): Promise<AuditEntry[]> {
  const first = stated[0];
  if (!first) {
    return [];
  }
  const count = stated.length;
  const taken = await sql<{
    last_seq: number | string;
    last_hash: string;
    label: string | null;
    clock_time: Date | null;
  }>`insert into audit_chains (chain_id, kind, last_seq, last_hash)
    values (${chain.id}, ${chain.kind}, ${count}, ${GENESIS_HASH})
    on conflict (chain_id) do update set last_seq = audit_chains.last_seq + ${count}
    returning last_seq, last_hash, ${labelOf(first, chain)} as label,
      ${clockTimeOf(chain)} as clock_time`.execute(trx);
  const tip = taken.rows[0];
  if (!tip) {
    throw new Error('the audit chain statement returned no row');
  }
  const occurredAt = (tip.clock_time ?? now).toISOString();
  const label = tip.label ?? first.actor.type;
  let seq = Number(tip.last_seq) - count;
  let prevHash = tip.last_hash;
  const entries: AuditEntry[] = [];
  for (const entry of stated) {
    seq += 1;
    const body: Omit<AuditEntry, 'hash'> = {
      id: ids(),
      seq,
      occurred_at: occurredAt,
      family_id: chain.kind === 'family' ? chain.id : null,
      org_id: chain.kind === 'org' ? chain.id : null,
      actor: { type: entry.actor.type, id: entry.actor.id, label },
      action: entry.action,
      target: entry.target,
      request_id: entry.actor.requestId,
      changes: entry.changes,
      prev_hash: prevHash,
    };
    const hash = entryHash(body);
    entries.push({ ...body, hash });
    prevHash = hash;
  }
  await trx
    .with('appended', (db) =>
      db.insertInto('audit_entries').values(
        entries.map((entry) => ({
          id: entry.id,
          chain_id: chain.id,
          seq: entry.seq,
          occurred_at: entry.occurred_at,
          family_id: entry.family_id,
          org_id: entry.org_id,
          actor_type: entry.actor.type,
          actor_id: entry.actor.id,
          actor_label: entry.actor.label,
          action: entry.action,
          target_type: entry.target.type,
          target_id: entry.target.id,
          request_id: entry.request_id,
          changes: JSON.stringify(entry.changes) as unknown as Record<string, unknown>,
          prev_hash: entry.prev_hash,
          hash: entry.hash,
        })),
      ),
    )
    .updateTable('audit_chains')
    .set({ last_hash: prevHash })
    .where('chain_id', '=', chain.id)
    .execute();
  return entries;
}

type EntryRow = Omit<AuditEntryTable, 'chain_id' | 'occurred_at'> & { occurred_at: Date };

export function entryOf(row: EntryRow): AuditEntry {
  return {
    id: row.id,
    seq: Number(row.seq),
    occurred_at: row.occurred_at.toISOString(),
    family_id: row.family_id,
    org_id: row.org_id,
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    request_id: row.request_id,
    changes: row.changes,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

const ENTRY_COLUMNS = [
  'id',
  'seq',
  'occurred_at',
  'family_id',
  'org_id',
  'actor_type',
  'actor_id',
  'actor_label',
  'action',
  'target_type',
  'target_id',
  'request_id',
  'changes',
  'prev_hash',
  'hash',
] as const;

/**
 * A page of the chain, newest first: `limit` entries before the entry `before` (from the
 * newest when absent). `undefined` when `before` is not an entry of this chain.
 */
export async function listChain(
  db: Db,
  chainId: string,
  limit: number,
  before: string | undefined,
): Promise<EntryRow[] | undefined> {
  let query = db
    .selectFrom('audit_entries')
    .select(ENTRY_COLUMNS)
    .where('chain_id', '=', chainId)
    .orderBy('seq', 'desc')
    .limit(limit);
  if (before !== undefined) {
    const anchor = await db
      .selectFrom('audit_entries')
      .select('seq')
      .where('id', '=', before)
      .where('chain_id', '=', chainId)
      .executeTakeFirst();
    if (!anchor) {
      return undefined;
    }
    query = query.where('seq', '<', anchor.seq);
  }
  return query.execute();
}

/** The chain's tip (none: nothing was ever written to it). */
export async function findChainTip(db: Db, chainId: string) {
  const row = await db
    .selectFrom('audit_chains')
    .select(['last_seq', 'last_hash'])
    .where('chain_id', '=', chainId)
    .executeTakeFirst();
  return row ? { seq: Number(row.last_seq), hash: row.last_hash } : undefined;
}

/** Every entry of the chain, oldest first, in pages (export streams them). */
export async function* chainEntries(db: Db, chainId: string, pageSize = 500) {
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('audit_entries')
      .select(ENTRY_COLUMNS)
      .where('chain_id', '=', chainId)
      .where('seq', '>', after)
      .orderBy('seq', 'asc')
      .limit(pageSize)
      .execute();
    for (const row of rows) {
      yield entryOf(row);
    }
    const last = rows.at(-1);
    if (!last || rows.length < pageSize) {
      return;
    }
    after = Number(last.seq);
  }
}

/**
 * Lets this transaction remove audit entries (the retention purge and erasure, and nothing
 * else: the trigger refuses every other UPDATE and DELETE).
 */
export async function allowAuditRemoval(trx: Kysely<Database>): Promise<void> {
  await sql`select set_config('haven.audit_removal', 'on', true)`.execute(trx);
}

/** Removes whole chains (erasure); the caller's transaction must allow it. */
export async function removeChains(trx: Kysely<Database>, chainIds: readonly string[]) {
  if (chainIds.length === 0) {
    return 0;
  }
  const removed = await trx
    .deleteFrom('audit_entries')
    .where('chain_id', 'in', chainIds)
    .executeTakeFirst();
  await trx.deleteFrom('audit_chains').where('chain_id', 'in', chainIds).execute();
  return Number(removed.numDeletedRows);
}
