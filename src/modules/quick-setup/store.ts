// SQL of quick setup: the one operation that writes a family, a child, a policy and its
// rules together. Each of its writes is one statement (data-modifying CTEs: PostgreSQL runs
// every part exactly once and checks foreign keys at the end of the statement), so a brand-new
// family costs one round trip and needs no transaction. Into an existing family, each step
// finds before it creates, under a lock: an identical call repairs whatever a crashed earlier
// call left half-made. A new family's audit entry is part of that one statement too: its chain
// begins with it, so nothing needs reading first (docs/decisions.md "Quick setup's audit
// entry").
import { randomUUID } from 'node:crypto';
import { type Insertable, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Db } from '../../db/connect.js';
import { registerPrepared } from '../../db/prepared-statements.js';
import type { Database } from '../../db/schema.js';
import type { Strictness } from '../age/derivation.js';
import type { AuditChainTable, AuditEntryTable } from '../audit/store.js';
import { type ChildRow, childValues } from '../children/store.js';
import type { FamilyRow } from '../families/store.js';
import type { PolicyRow, PolicyRuleRow, RuleWrite } from '../policies/store.js';

export interface QuickSetupWrite {
  /** A family the caller may write (checked before), or a new one and its owner. */
  family: { existing: FamilyRow } | { create: FamilyRow; ownerUserId?: string };
  /** `id` fixes the child's id when it has to be created (the seeded demo children). */
  child: { name: string; birth_date: string; id?: string };
  policyName: string;
  /** The rules generated from the child's age with `strictness` (written `origin: age`). */
  rules: RuleWrite[];
  strictness: Strictness;
  /** The effective age the rules were generated for (a new child's `age_applied`). */
  childAge: number;
  /** `YYYY-MM-DD`: when that age next changes (a new child's `next_age_change_on`). */
  nextAgeChangeOn: string;
  now: Date;
}

export interface QuickSetupRows {
  family: FamilyRow;
  child: ChildRow;
  policy: PolicyRow;
  rules: PolicyRuleRow[];
  /**
   * What this call wrote, so the caller announces exactly that (policy `updated`: repaired;
   * `rules`: how many rules it wrote).
   */
  wrote: { family: boolean; child: boolean; policy: 'created' | 'updated' | 'none'; rules: number };
}

/**
 * The rows of a new family's audit chain, beginning with the setup's entry (audit/store.ts
 * newChainRows), given what the call writes; none when the log is off.
 */
export type NewFamilyAudit = (
  rows: QuickSetupRows,
) => { chain: AuditChainTable; entries: Insertable<AuditEntryTable>[] } | undefined;

/** The rows quick setup creates, the same whether the family is new or repaired. */
function newChild(input: QuickSetupWrite, familyId: string): ChildRow {
  return {
    id: input.child.id ?? randomUUID(),
    family_id: familyId,
    name: input.child.name,
    birth_date: input.child.birth_date,
    avatar_url: null,
    created_at: input.now,
    updated_at: input.now,
    // The rules written with the child are those of its age now.
    age_applied: input.childAge,
    next_age_change_on: input.nextAgeChangeOn,
    counting_signals: [],
  };
}

function newPolicy(input: QuickSetupWrite, childId: string): PolicyRow {
  return {
    id: randomUUID(),
    child_id: childId,
    name: input.policyName,
    status: 'active',
    priority: 0,
    version: 1,
    strictness: input.strictness,
    paused_reason: null,
    created_at: input.now,
    updated_at: input.now,
  };
}

function newRules(input: QuickSetupWrite, policyId: string, rules: RuleWrite[]): PolicyRuleRow[] {
  return rules.map((rule) => ({
    id: randomUUID(),
    policy_id: policyId,
    ...rule,
    origin: 'age',
    created_at: input.now,
    updated_at: input.now,
  }));
}

const byCategory = (a: PolicyRuleRow, b: PolicyRuleRow) => (a.category < b.category ? -1 : 1);

/**
 * The rule rows as the insert's JSON, every column. The rows share their two timestamps, so
 * each distinct Date is written as text once: `Date#toJSON` on each of a setup's 40 dates
 * was two thirds of stringifying its 20 rules (~41 → ~12 µs).
 */
function rulesJson(rules: PolicyRuleRow[]): string {
  const texts = new Map<Date, string>();
  const text = (date: Date) => {
    let iso = texts.get(date);
    if (iso === undefined) {
      iso = date.toISOString();
      texts.set(date, iso);
    }
    return iso;
  };
  return JSON.stringify(
    rules.map(
      (rule) =>
        ({
          id: rule.id,
          policy_id: rule.policy_id,
          category: rule.category,
          enabled: rule.enabled,
          config: rule.config,
          origin: rule.origin,
          created_at: text(rule.created_at),
          updated_at: text(rule.updated_at),
          // A column added to the row type must be added here (and to the insert) too.
        }) satisfies Record<keyof PolicyRuleRow, unknown>,
    ),
  );
}

/**
 * The rules' insert: every row in one jsonb parameter, expanded by `jsonb_to_recordset`. The
 * text and its one parameter are the same however many rules; a VALUES list had seven
 * parameters a rule, and building it (Kysely) and converting each value (`pg`) was ~15 % of a
 * quick setup's server time. Nothing is returned: the rows are the ones written here.
 */
function insertRules(rules: PolicyRuleRow[]) {
  return sql`insert into policy_rules (id, policy_id, category, enabled, config, origin, created_at, updated_at)
    select * from jsonb_to_recordset(${rulesJson(rules)}::jsonb)
      as r(id uuid, policy_id uuid, category text, enabled boolean, config jsonb, origin text,
        created_at timestamptz, updated_at timestamptz)`;
}

/**
 * `insert into <table> (<columns>) values (<values>)` for one row of our own making. Kysely's
 * insert builder (value parsing, frozen operation nodes) cost more than the rules' insert for
 * these one-row inserts; the columns are the row's own keys, checked against the table's type,
 * never a caller's text.
 */
function insertRow<T extends keyof Database & string>(table: T, row: Insertable<Database[T]>) {
  const columns = Object.keys(row);
  const values = Object.values(row as Record<string, unknown>);
  return sql`insert into ${sql.raw(`"${table}" ("${columns.join('", "')}")`)} values (${sql.join(values)})`;
}

/**
 * One statement: the given inserts as CTEs ahead of the rules' insert. The parents come first
 * in the text, though PostgreSQL checks the references only at the end.
 */
async function insertWithRules(
  db: Db,
  parents: RawBuilder<unknown>[],
  rules: PolicyRuleRow[],
): Promise<PolicyRuleRow[]> {
  const ctes = parents.map((insert, index) => sql`w${sql.raw(String(index))} as (${insert})`);
  const statement = insertRules(rules);
  const compiled = (
    ctes.length === 0 ? statement : sql`with ${sql.join(ctes)} ${statement}`
  ).compile(db);
  // Its text depends only on which tables and columns are written (the values are
  // parameters): a handful of texts, worth PostgreSQL's planning them once per connection.
  registerPrepared(compiled.sql);
  await db.executeQuery(compiled);
  return rules;
}

/** A brand-new family has nothing to find or repair: one statement writes it all. */
async function writeNewFamily(
  db: Db,
  input: QuickSetupWrite,
  family: FamilyRow,
  audit: NewFamilyAudit | undefined,
): Promise<QuickSetupRows> {
  const child = newChild(input, family.id);
  const policy = newPolicy(input, child.id);
  const rules = newRules(input, policy.id, input.rules);
  const rows: QuickSetupRows = {
    family,
    child,
    policy,
    rules,
    wrote: { family: true, child: true, policy: 'created', rules: rules.length },
  };
  const parents = [insertRow('families', family)];
  if ('ownerUserId' in input.family && input.family.ownerUserId) {
    parents.push(
      insertRow('family_members', {
        id: randomUUID(),
        family_id: family.id,
        user_id: input.family.ownerUserId,
        role: 'owner',
        joined_at: input.now,
      }),
    );
  }
  parents.push(insertRow('children', childValues(child)));
  parents.push(insertRow('policies', policy));
  const logged = audit?.(rows);
  if (logged) {
    parents.push(insertRow('audit_chains', logged.chain));
    for (const entry of logged.entries) {
      parents.push(insertRow('audit_entries', entry));
    }
  }
  await insertWithRules(db, parents, rules);
  rules.sort(byCategory);
  return rows;
}

/**
 * The child of this name and birth date (the first made), its policy of this name (the first
 * made) and that policy's rules, in one statement: a row per rule, or one row without a rule.
 */
async function findSetup(trx: Db, familyId: string, input: QuickSetupWrite) {
  const rows = await trx
    .selectFrom((db) =>
      db
        .selectFrom('children')
        .selectAll()
        .where('family_id', '=', familyId)
        .where('name', '=', input.child.name)
        .where('birth_date', '=', input.child.birth_date)
        .orderBy('created_at')
        .limit(1)
        .as('c'),
    )
    .leftJoinLateral(
      (db) =>
        db
          .selectFrom('policies')
          .selectAll()
          .whereRef('child_id', '=', 'c.id')
          .where('name', '=', input.policyName)
          .orderBy('created_at')
          .limit(1)
          .as('p'),
      (join) => join.onTrue(),
    )
    .leftJoin('policy_rules as r', 'r.policy_id', 'p.id')
    .select([
      'c.id as c_id',
      'c.family_id as c_family_id',
      'c.name as c_name',
      'c.birth_date as c_birth_date',
      'c.avatar_url as c_avatar_url',
      'c.created_at as c_created_at',
      'c.updated_at as c_updated_at',
      'c.age_applied as c_age_applied',
      'c.next_age_change_on as c_next_age_change_on',
      'c.counting_signals as c_counting_signals',
      'p.id as p_id',
      'p.child_id as p_child_id',
      'p.name as p_name',
      'p.status as p_status',
      'p.priority as p_priority',
      'p.version as p_version',
      'p.strictness as p_strictness',
      'p.paused_reason as p_paused_reason',
      'p.created_at as p_created_at',
      'p.updated_at as p_updated_at',
      'r.id as r_id',
      'r.policy_id as r_policy_id',
      'r.category as r_category',
      'r.enabled as r_enabled',
      'r.config as r_config',
      'r.origin as r_origin',
      'r.created_at as r_created_at',
      'r.updated_at as r_updated_at',
    ])
    .execute();
  const [first] = rows;
  if (!first) {
    return { child: undefined, policy: undefined, rules: [] };
  }
  const child: ChildRow = {
    id: first.c_id,
    family_id: first.c_family_id,
    name: first.c_name,
    birth_date: first.c_birth_date,
    avatar_url: first.c_avatar_url,
    created_at: first.c_created_at,
    updated_at: first.c_updated_at,
    age_applied: first.c_age_applied,
    next_age_change_on: first.c_next_age_change_on,
    counting_signals: first.c_counting_signals,
  };
  if (first.p_id === null) {
    return { child, policy: undefined, rules: [] };
  }
  const policy = {
    id: first.p_id,
    child_id: first.p_child_id,
    name: first.p_name,
    status: first.p_status,
    priority: first.p_priority,
    version: first.p_version,
    strictness: first.p_strictness,
    paused_reason: first.p_paused_reason,
    created_at: first.p_created_at,
    updated_at: first.p_updated_at,
  } as PolicyRow;
  const rules: PolicyRuleRow[] = [];
  for (const row of rows) {
    if (row.r_id !== null) {
      rules.push({
        id: row.r_id,
        policy_id: row.r_policy_id,
        category: row.r_category,
        enabled: row.r_enabled,
        config: row.r_config,
        origin: row.r_origin,
        created_at: row.r_created_at,
        updated_at: row.r_updated_at,
      } as PolicyRuleRow);
    }
  }
  return { child, policy, rules };
}

/** Into a family that exists: find under a lock, then write what is missing in one statement. */
async function writeIntoFamily(
  db: Db,
  input: QuickSetupWrite,
  family: FamilyRow,
  implied: ImpliedWrites,
): Promise<QuickSetupRows> {
  return db.transaction().execute(async (trx) => {
    // Identical calls queue here, so they find each other's child instead of making two. The
    // lock is its own statement: a read in the same statement would use a snapshot taken
    // before the lock was granted, and miss what the call it waited for committed.
    const dedupe = `${family.id}\n${input.child.name}\n${input.child.birth_date}`;
    await sql`select pg_advisory_xact_lock(hashtext(${dedupe}))`.execute(trx);
    const found = await findSetup(trx, family.id, input);

    const parents: RawBuilder<unknown>[] = [];
    const child = found.child ?? newChild(input, family.id);
    if (!found.child) {
      parents.push(insertRow('children', childValues(child)));
    }
    let policy = found.policy ?? newPolicy(input, child.id);
    if (!found.policy) {
      parents.push(insertRow('policies', policy));
    }
    const wanted = new Set(input.rules.map((rule) => rule.category));
    const present = found.rules.filter((rule) => wanted.has(rule.category));
    const presentCategories = new Set(present.map((rule) => rule.category));
    const missing = input.rules.filter((rule) => !presentCategories.has(rule.category));
    const inserted =
      missing.length > 0
        ? await insertWithRules(trx, parents, newRules(input, policy.id, missing))
        : [];
    // A repair is one change of the policy. A policy its family paused stays paused: that was
    // a decision, not a half-made setup.
    if (found.policy && missing.length > 0) {
      policy = await trx
        .updateTable('policies')
        .set({ version: sql`version + 1`, updated_at: input.now })
        .where('id', '=', policy.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    const wrote = {
      family: false,
      child: !found.child,
      policy: !found.policy
        ? ('created' as const)
        : missing.length > 0
          ? ('updated' as const)
          : ('none' as const),
      rules: inserted.length,
    };
    const rules = [...present, ...inserted].sort(byCategory);
    const rows = { family, child, policy, rules, wrote };
    await implied(trx, rows);
    return rows;
  });
}

/** What the rows written imply (their events, their audit entry), written in their transaction. */
export type ImpliedWrites = (trx: Transaction<Database>, rows: QuickSetupRows) => Promise<void>;

/**
 * `implied` runs inside the transaction of a write into an existing family. A new family's
 * write is one statement and implies nothing more than its audit entry (`newFamilyAudit`,
 * written by the same statement): its events reach no webhook and no connection, since the
 * family has none yet.
 */
export async function writeQuickSetup(
  db: Db,
  input: QuickSetupWrite,
  implied: ImpliedWrites,
  newFamilyAudit?: NewFamilyAudit,
): Promise<QuickSetupRows> {
  return 'create' in input.family
    ? writeNewFamily(db, input, input.family.create, newFamilyAudit)
    : writeIntoFamily(db, input, input.family.existing, implied);
}
