// The export's reads (CONTRACT.md §12.2): every table about a family or a child, a keyset page
// at a time, so that however much a family holds, the process holds one page of it. Each read
// names its columns: what the module's own GET answers, never a key hash, a sealed credential
// or a sealed signing secret (a column added to a table later is not exported until named here).
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { AgeSignalRow } from '../age/signals-store.js';
import type { AuditEntryTable } from '../audit/store.js';
import type { ChildRow } from '../children/store.js';
import type { DeviceRow } from '../devices/store.js';
import type { JobRow } from '../enforcement/store.js';

/** Rows a page: a statement's result is held while it is written out, then let go. */
export const PAGE_SIZE = 500;

/**
 * `(first, second) > (row's first, row's second)`: the rows after `row` in the order of the two
 * columns, read from the index that orders them. Called only with a page's `after` present
 * (inside `$if`, which does not narrow it for the compiler).
 */
function following<Row>(
  row: Row | undefined,
  first: keyof Row & string,
  second: keyof Row & string,
) {
  const values = row as Row;
  return sql<boolean>`(${sql.ref(first)}, ${sql.ref(second)}) > (${values[first]}, ${values[second]})`;
}

/**
 * Every row of a keyset-paged read: `page(after)` answers up to `PAGE_SIZE` rows following
 * `after` (the last row of the previous page; undefined: from the first) in the read's order.
 */
async function* keyset<Row>(page: (after: Row | undefined) => Promise<Row[]>): AsyncGenerator<Row> {
  let after: Row | undefined;
  for (;;) {
    const rows = await page(after);
    yield* rows;
    if (rows.length < PAGE_SIZE) {
      return;
    }
    after = rows.at(-1);
  }
}

export interface MemberRow {
  id: string;
  family_id: string;
  user_id: string;
  role: string;
  joined_at: Date;
}

export function familyMembers(db: Db, familyId: string) {
  return keyset<MemberRow>((after) =>
    db
      .selectFrom('family_members')
      .select(['id', 'family_id', 'user_id', 'role', 'joined_at'])
      .where('family_id', '=', familyId)
      .$if(after !== undefined, (query) => query.where(following(after, 'joined_at', 'id')))
      .orderBy('joined_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** A family's children, oldest first (every column: a child holds no secret). */
export function familyChildren(db: Db, familyId: string) {
  return keyset<ChildRow>((after) =>
    db
      .selectFrom('children')
      .selectAll()
      .where('family_id', '=', familyId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

export function childAgeSignals(db: Db, childId: string) {
  return keyset<AgeSignalRow>((after) =>
    db
      .selectFrom('age_signals')
      .select([
        'id',
        'child_id',
        'source',
        'age_lower',
        'age_upper',
        'method',
        'observed_at',
        'created_at',
      ])
      .where('child_id', '=', childId)
      .$if(after !== undefined, (query) => query.where(following(after, 'observed_at', 'id')))
      .orderBy('observed_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

const POLICY_COLUMNS = [
  'id',
  'child_id',
  'name',
  'status',
  'priority',
  'version',
  'strictness',
  'paused_reason',
  'created_at',
  'updated_at',
] as const;

export function childPolicies(db: Db, childId: string) {
  return keyset((after: { created_at: Date; id: string } | undefined) =>
    db
      .selectFrom('policies')
      .select(POLICY_COLUMNS)
      .where('child_id', '=', childId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

const RULE_COLUMNS = [
  'id',
  'policy_id',
  'category',
  'enabled',
  'config',
  'origin',
  'created_at',
  'updated_at',
] as const;

/** A policy's rules by category (one rule a category). */
export function policyRules(db: Db, policyId: string) {
  return keyset((after: { category: string } | undefined) =>
    db
      .selectFrom('policy_rules')
      .select(RULE_COLUMNS)
      .where('policy_id', '=', policyId)
      .$if(after !== undefined, (query) => query.where('category', '>', after?.category as string))
      .orderBy('category')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** A family's connections as every read shows them: whether credentials are held, not them. */
export function familyConnections(db: Db, familyId: string) {
  return keyset((after: { created_at: Date; id: string } | undefined) =>
    db
      .selectFrom('family_connections')
      .select([
        'id',
        'family_id',
        'platform_id',
        'status',
        'profiles',
        'created_at',
        'updated_at',
        'last_enforcement_at',
        'last_enforcement_status',
      ])
      .select(sql<boolean>`credentials is not null`.as('has_credentials'))
      .where('family_id', '=', familyId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** A child's devices: the key's prefix, never its hash. */
export function childDevices(db: Db, childId: string) {
  return keyset<DeviceRow>((after) =>
    db
      .selectFrom('devices')
      .select([
        'id',
        'child_id',
        'family_id',
        'device_name',
        'platform_id',
        'device_model',
        'os_version',
        'app_version',
        'status',
        'key_prefix',
        'last_seen_at',
        'acknowledged_version',
        'enforcement_status',
        'created_at',
        'updated_at',
        'revoked_at',
      ])
      .where('child_id', '=', childId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** What a device reported, as it sent it (kept for the retention period). */
export function deviceReports(db: Db, deviceId: string) {
  return keyset((after: { received_at: Date; id: string } | undefined) =>
    db
      .selectFrom('device_reports')
      .select([
        'id',
        'device_id',
        'child_id',
        'report_type',
        'payload',
        'reported_at',
        'received_at',
      ])
      .where('device_id', '=', deviceId)
      .$if(after !== undefined, (query) => query.where(following(after, 'received_at', 'id')))
      .orderBy('received_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** Enforcement jobs of a family or of one child, oldest first. */
export function enforcementJobs(db: Db, of: { familyId: string } | { childId: string }) {
  return keyset<JobRow>((after) => {
    const query = db.selectFrom('enforcement_jobs').selectAll();
    return (
      'familyId' in of
        ? query.where('family_id', '=', of.familyId)
        : query.where('child_id', '=', of.childId)
    )
      .$if(after !== undefined, (q) => q.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute();
  });
}

export interface ViewingExportRow {
  id: string;
  child_id: string;
  device_id: string | null;
  platform: string;
  title: string;
  series_title: string | null;
  watched_at: Date;
  created_at: Date;
}

/** A child's viewing history, oldest first (the child's index, read backwards). */
export function childViewingHistory(db: Db, childId: string) {
  return keyset<ViewingExportRow>((after) =>
    db
      .selectFrom('viewing_history')
      .select([
        'id',
        'child_id',
        'device_id',
        'platform',
        'title',
        'series_title',
        'watched_at',
        'created_at',
      ])
      .where('child_id', '=', childId)
      .$if(after !== undefined, (query) => query.where(following(after, 'watched_at', 'id')))
      .orderBy('watched_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** A family's webhooks without their sealed signing secrets (Haven keeps no prefix of one). */
export function familyWebhooks(db: Db, familyId: string) {
  return keyset((after: { created_at: Date; id: string } | undefined) =>
    db
      .selectFrom('webhooks')
      .select([
        'id',
        'family_id',
        'url',
        'events',
        'active',
        'failing_since',
        'disabled_reason',
        'created_at',
        'updated_at',
      ])
      .where('family_id', '=', familyId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/**
 * A webhook's delivery attempts as GET /webhooks/{id}/deliveries shows them: the body sent
 * stays internal there and here. `seq` orders the page (the caller drops it).
 */
export function webhookDeliveries(db: Db, webhookId: string) {
  return keyset((after: { created_at: Date; seq: string } | undefined) =>
    db
      .selectFrom('webhook_deliveries')
      .select([
        'id',
        'webhook_id',
        'message_id',
        'event',
        'status',
        'response_code',
        'error',
        'attempt',
        'next_retry_at',
        'created_at',
        'attempted_at',
        'seq',
      ])
      .where('webhook_id', '=', webhookId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'seq')))
      .orderBy('created_at')
      .orderBy('seq')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/** The MCP tokens bound to a family: their prefixes, never their hashes. */
export function familyMcpTokens(db: Db, familyId: string) {
  return keyset((after: { created_at: Date; id: string } | undefined) =>
    db
      .selectFrom('mcp_tokens')
      .select([
        'id',
        'user_id',
        'family_id',
        'label',
        'token_prefix',
        'last_used_at',
        'created_at',
        'revoked_at',
      ])
      .where('family_id', '=', familyId)
      .$if(after !== undefined, (query) => query.where(following(after, 'created_at', 'id')))
      .orderBy('created_at')
      .orderBy('id')
      .limit(PAGE_SIZE)
      .execute(),
  );
}

/**
 * The entries of the family's chain about one child, oldest first: those whose target is the
 * child, or one of its policies, devices, age signals or enforcement jobs as they are now (an
 * entry about a policy deleted since names an id nothing ties to the child any more).
 */
export function childAuditEntries(db: Db, familyId: string, childId: string) {
  const ownIds = sql<string>`(
    select id::text from policies where child_id = ${childId}
    union all select id::text from devices where child_id = ${childId}
    union all select id::text from age_signals where child_id = ${childId}
    union all select id::text from enforcement_jobs where child_id = ${childId}
  )`;
  return keyset(
    (after: (Omit<AuditEntryTable, 'occurred_at'> & { occurred_at: Date }) | undefined) =>
      db
        .selectFrom('audit_entries')
        .selectAll()
        .where('chain_id', '=', familyId)
        .where(sql<boolean>`(target_id = ${childId} or target_id in ${ownIds})`)
        .$if(after !== undefined, (query) => query.where('seq', '>', Number(after?.seq)))
        .orderBy('seq')
        .limit(PAGE_SIZE)
        .execute(),
  );
}
