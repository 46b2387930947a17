// SQL of the audit log (CONTRACT.md §12.1; migrations/0023_audit_log.sql).
import { type ColumnType, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { StatedAuditEntry } from '../../db/transaction-effects.js';
import type { AuditActorType } from './actor.js';
import { type AuditEntry, entryHash, GENESIS_HASH } from './entry.js';
import { hashFragments } from './hashed-in-sql.js';

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
  /** The newest entry's `prev_hash` (read back by the one-statement append). */
  last_prev_hash: string;
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
      return sql<string>`(select key_prefix from developer_api_keys where id = ${actor.id})`;
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

/** The entries `stated` (all of one actor) make after `tip`, hashed in chain order. */
function chained(
  chain: Chain,
  stated: readonly StatedAuditEntry[],
  tip: { seq: number; hash: string },
  label: string,
  occurredAt: string,
  ids: () => string,
): AuditEntry[] {
  let seq = tip.seq;
  let prevHash = tip.hash;
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
  return entries;
}

/** The stored row of an entry (`changes` as JSON text: the column is jsonb). */
function rowOf(chainId: string, entry: AuditEntry) {
  return {
    id: entry.id,
    chain_id: chainId,
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
  };
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
): Promise<void> {
  const first = stated[0];
  if (!first) {
    return;
  }
  if (stated.length === 1 && (await appendOne(trx, chain, first, ids(), now))) {
    return;
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
  const entries = chained(
    chain,
    stated,
    { seq: Number(tip.last_seq) - count, hash: tip.last_hash },
    tip.label ?? first.actor.type,
    (tip.clock_time ?? now).toISOString(),
    ids,
  );
  await trx
    .with('appended', (db) =>
      db.insertInto('audit_entries').values(entries.map((entry) => rowOf(chain.id, entry))),
    )
    .updateTable('audit_chains')
    .set({
      last_hash: entries.at(-1)?.hash ?? tip.last_hash,
      last_prev_hash: entries.at(-1)?.prev_hash ?? tip.last_hash,
    })
    .where('chain_id', '=', chain.id)
    .execute();
}

/**
 * The common case in one statement: one entry on a chain that exists. The chain's row is
 * locked by the UPDATE that takes the next seq, and the entry's hash is computed there from
 * the JCS text with the values read under the lock (hashed-in-sql.ts), so concurrent writers
 * still follow each other. False when it could not (no chain yet, or a change's value holds
 * a placeholder): nothing was written, and the caller takes the two-statement way.
 */
async function appendOne(
  trx: Kysely<Database>,
  chain: Chain,
  stated: StatedAuditEntry,
  id: string,
  now: Date,
): Promise<boolean> {
  const familyId = chain.kind === 'family' ? chain.id : null;
  const orgId = chain.kind === 'org' ? chain.id : null;
  const fragments = hashFragments({
    id,
    family_id: familyId,
    org_id: orgId,
    actor: { type: stated.actor.type, id: stated.actor.id },
    action: stated.action,
    target: stated.target,
    request_id: stated.actor.requestId,
    changes: stated.changes,
  });
  if (!fragments) {
    return false;
  }
  const [beforeLabel, beforeAt, beforePrev, beforeSeq, afterSeq] = fragments;
  const appended = await sql<{ seq: string | number }>`
    with facts as (
      select coalesce(${labelOf(stated, chain)}, ${stated.actor.type}::text) as label,
        coalesce(${clockTimeOf(chain)}, ${now}::timestamptz) as at
    ),
    tip as (
      update audit_chains c
      set last_seq = c.last_seq + 1,
        last_prev_hash = c.last_hash,
        last_hash = encode(sha256(convert_to(
          ${beforeLabel}::text || to_jsonb(facts.label)::text || ${beforeAt}::text
            || to_char(facts.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
            || ${beforePrev}::text || c.last_hash || ${beforeSeq}::text
            || (c.last_seq + 1)::text || ${afterSeq}::text,
          'UTF8')), 'hex')
      from facts
      where c.chain_id = ${chain.id}
      returning c.last_seq, c.last_prev_hash, c.last_hash, facts.label, facts.at
    )
    insert into audit_entries (id, chain_id, seq, occurred_at, family_id, org_id, actor_type,
      actor_id, actor_label, action, target_type, target_id, request_id, changes, prev_hash, hash)
    select ${id}, ${chain.id}, tip.last_seq, tip.at, ${familyId}, ${orgId}, ${stated.actor.type},
      ${stated.actor.id}, tip.label, ${stated.action}, ${stated.target.type},
      ${stated.target.id}, ${stated.actor.requestId}, ${JSON.stringify(stated.changes)}::jsonb,
      tip.last_prev_hash, tip.last_hash
    from tip
    returning seq`.execute(trx);
  return appended.rows.length === 1;
}

/**
 * The rows of a chain that begins with `stated` (all of one actor, labelled `label`), for a
 * writer that makes the chain's family in the same statement and so knows the chain is new
 * and what the entry says before anything is read (a new family's quick setup). Its insert
 * fails if the chain already exists: nothing is ever appended this way to a chain with
 * entries.
 */
export function newChainRows(
  chain: Chain,
  stated: readonly StatedAuditEntry[],
  label: string,
  occurredAt: Date,
  ids: () => string,
) {
  const entries = chained(
    chain,
    stated,
    { seq: 0, hash: GENESIS_HASH },
    label,
    occurredAt.toISOString(),
    ids,
  );
  return {
    chain: {
      chain_id: chain.id,
      kind: chain.kind,
      last_seq: entries.length,
      last_hash: entries.at(-1)?.hash ?? GENESIS_HASH,
      last_prev_hash: entries.at(-1)?.prev_hash ?? GENESIS_HASH,
    } satisfies AuditChainTable,
    entries: entries.map((entry) => rowOf(chain.id, entry)),
  };
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
