// SQL of policies and their rules. A change and its version bump happen in one statement
// set inside the caller's transaction.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Strictness } from '../age/derivation.js';
import { childAnchor } from '../children/store.js';
import { type FamilyTenant, familyFacts, NEWEST_FIRST, withRows } from '../families/store.js';

declare module '../../db/schema.js' {
  interface Database {
    policies: PolicyTable;
    policy_rules: PolicyRuleTable;
  }
}

export type PolicyStatus = 'draft' | 'active' | 'paused';

export interface PolicyTable {
  id: string;
  child_id: string;
  name: string;
  status: PolicyStatus;
  priority: number;
  version: number;
  /** The strictness it was last generated from age with; null until first generated. */
  strictness: Strictness | null;
  /** Why a policy is paused when no person paused it: `came_of_age`. */
  paused_reason: 'came_of_age' | null;
  created_at: Date;
  updated_at: Date;
}

/** `age`: written by generation from age (quick setup, generate-from-age); `custom`: by a person or key. */
export type RuleOrigin = 'age' | 'custom';

export interface PolicyRuleTable {
  id: string;
  policy_id: string;
  category: string;
  enabled: boolean;
  config: Record<string, unknown>;
  origin: RuleOrigin;
  created_at: Date;
  updated_at: Date;
}

export type PolicyRow = PolicyTable;
export type PolicyRuleRow = PolicyRuleTable;

export interface RuleWrite {
  category: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

export async function insertPolicy(db: Db, policy: PolicyRow): Promise<void> {
  await db.insertInto('policies').values(policy).execute();
}

/** A policy with the facts of its child's family for `tenant` (no row: no such policy). */
export async function findPolicyRead(db: Db, policyId: string, tenant: FamilyTenant) {
  return policyAnchor(db, policyId, tenant).selectAll('p').executeTakeFirst();
}

/** The facts of a policy's family, by the policy (child, then family: primary keys). */
function policyAnchor(db: Db, policyId: string, tenant: FamilyTenant) {
  return db
    .selectFrom('policies as p')
    .innerJoin('children as c', 'c.id', 'p.child_id')
    .innerJoin('families as f', 'f.id', 'c.family_id')
    .select(familyFacts(tenant))
    .where('p.id', '=', policyId);
}

/** A child's policies, newest first, with its family's facts: one statement. */
export async function listPoliciesRead(db: Db, childId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    childAnchor(db, childId, tenant),
    db.selectFrom('policies').selectAll().where('child_id', '=', childId),
    NEWEST_FIRST,
  ).execute();
}

/** A policy's rules by category, with its family's facts: one statement. */
export async function listRulesRead(db: Db, policyId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    policyAnchor(db, policyId, tenant),
    db.selectFrom('policy_rules').selectAll().where('policy_id', '=', policyId),
    [['category', 'asc']],
  ).execute();
}

/**
 * The policy in force for a child: its active policy of the highest priority (the most
 * recently changed one on a tie). Devices and enforcement both read this one.
 */
export async function findActivePolicy(db: Db, childId: string): Promise<PolicyRow | undefined> {
  return activePolicyOf(db, childId).selectAll().executeTakeFirst();
}

function activePolicyOf(db: Db, childId: string) {
  return db
    .selectFrom('policies')
    .where('child_id', '=', childId)
    .where('status', '=', 'active')
    .orderBy('priority', 'desc')
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1);
}

export interface ActivePolicySnapshot {
  policy: Pick<PolicyRow, 'id' | 'child_id' | 'version'>;
  rules: Array<Pick<PolicyRuleRow, 'category' | 'enabled' | 'config'>>;
}

/**
 * The policy in force with its rules, read by ONE statement: one snapshot, so the rules are
 * exactly those of the version read (two statements could pair a version with the rules of a
 * later one, and a cache keyed by version would keep that pairing).
 */
export async function findActivePolicySnapshot(
  db: Db,
  childId: string,
): Promise<ActivePolicySnapshot | undefined> {
  const rows = await db
    .selectFrom('policies as p')
    .leftJoin('policy_rules as r', 'r.policy_id', 'p.id')
    .select(['p.id', 'p.child_id', 'p.version', 'r.category', 'r.enabled', 'r.config'])
    .where('p.id', '=', activePolicyOf(db, childId).select('id'))
    .orderBy('r.category')
    .execute();
  const first = rows[0];
  if (!first) {
    return undefined;
  }
  const rules: ActivePolicySnapshot['rules'] = [];
  for (const row of rows) {
    if (row.category !== null && row.enabled !== null && row.config !== null) {
      rules.push({ category: row.category, enabled: row.enabled, config: row.config });
    }
  }
  return { policy: { id: first.id, child_id: first.child_id, version: first.version }, rules };
}

/** Applies field changes (if any) and raises the version by exactly one. */
export async function bumpPolicy(
  db: Db,
  policyId: string,
  now: Date,
  changes: Partial<
    Pick<PolicyRow, 'name' | 'priority' | 'status' | 'strictness' | 'paused_reason'>
  > = {},
): Promise<PolicyRow> {
  return db
    .updateTable('policies')
    .set({ ...changes, version: sql`version + 1`, updated_at: now })
    .where('id', '=', policyId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A child's active and paused policies under a row lock (a birthday re-derives them). */
export async function lockLivePolicies(db: Db, childId: string): Promise<PolicyRow[]> {
  return db
    .selectFrom('policies')
    .selectAll()
    .where('child_id', '=', childId)
    .where('status', 'in', ['active', 'paused'])
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function deletePolicy(db: Db, policyId: string): Promise<void> {
  await db.deleteFrom('policies').where('id', '=', policyId).execute();
}

export async function listRules(db: Db, policyId: string): Promise<PolicyRuleRow[]> {
  return db
    .selectFrom('policy_rules')
    .selectAll()
    .where('policy_id', '=', policyId)
    .orderBy('category')
    .execute();
}

/** Writes the rules, each marked `origin` (a rewritten rule takes the new origin). */
export async function upsertRules(
  db: Db,
  policyId: string,
  rules: RuleWrite[],
  origin: RuleOrigin,
  now: Date,
): Promise<PolicyRuleRow[]> {
  if (rules.length === 0) {
    return [];
  }
  return db
    .insertInto('policy_rules')
    .values(
      rules.map((rule) => ({
        id: randomUUID(),
        policy_id: policyId,
        category: rule.category,
        enabled: rule.enabled,
        config: rule.config,
        origin,
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((conflict) =>
      conflict.columns(['policy_id', 'category']).doUpdateSet({
        enabled: (eb) => eb.ref('excluded.enabled'),
        config: (eb) => eb.ref('excluded.config'),
        origin: (eb) => eb.ref('excluded.origin'),
        updated_at: (eb) => eb.ref('excluded.updated_at'),
      }),
    )
    .returningAll()
    .execute();
}

export async function deleteRule(db: Db, policyId: string, category: string): Promise<boolean> {
  const result = await db
    .deleteFrom('policy_rules')
    .where('policy_id', '=', policyId)
    .where('category', '=', category)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
