// Policies of a child: draft -> active <-> paused, a version that rises by one on every
// change of the policy or its rules, rules from the closed registry.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import { CHILD_NOT_FOUND, type ChildrenService } from '../children/service.js';
import type { EventPublisher } from '../events/hub.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import { type FamilyFacts, withoutFacts } from '../families/store.js';
import { ageOn } from './age-bands.js';
import { rulesForAge, type Strictness } from './age-rules.js';
import type { PolicyChanges } from './policy-changes.js';
import { checkRule } from './rule-validation.js';
import {
  bumpPolicy,
  deletePolicy,
  deleteRule,
  findActivePolicy,
  findActivePolicySnapshot,
  findPolicyRead,
  insertPolicy,
  listPoliciesRead,
  listRules,
  listRulesRead,
  type PolicyRow,
  type PolicyStatus,
  type RuleWrite,
  upsertRules,
} from './store.js';

const POLICY_NOT_FOUND = 'policy not found';

/** The Policy resource, JSON-ready: what policy.* events carry (automatic enforcement reads it). */
export function policyEventData(policy: PolicyRow) {
  return {
    id: policy.id,
    child_id: policy.child_id,
    name: policy.name,
    status: policy.status,
    priority: policy.priority,
    version: policy.version,
    created_at: policy.created_at.toISOString(),
    updated_at: policy.updated_at.toISOString(),
  };
}

export function createPoliciesService(deps: {
  db: Db;
  clock: Clock;
  children: Pick<ChildrenService, 'requireChild'>;
  families: Pick<FamiliesService, 'checkThrough' | 'visibleRows'>;
  events: EventPublisher;
  changes: Pick<PolicyChanges, 'child'>;
}) {
  const { db, clock } = deps;

  /**
   * The policy and its child's family (events are addressed to families), in one statement;
   * a policy of a family the caller cannot see does not exist for it.
   */
  async function requirePolicyIn(principal: Principal, policyId: string, access: 'read' | 'write') {
    const row = await findPolicyRead(db, policyId, tenantOf(principal));
    deps.families.checkThrough(principal, row, POLICY_NOT_FOUND, { access });
    const visible = row as PolicyRow & FamilyFacts;
    return { policy: withoutFacts(visible) as PolicyRow, familyId: visible.vis_family_id };
  }

  async function requirePolicy(principal: Principal, policyId: string, access: 'read' | 'write') {
    return (await requirePolicyIn(principal, policyId, access)).policy;
  }

  /**
   * Tells subscribers (webhooks, automatic enforcement), after the write committed: the
   * Policy resource after the change, JSON-ready. Every instance's cache of the policy in
   * force hears it first, so a device polling right after the event sees the change.
   */
  async function publish(
    type: 'policy.created' | 'policy.updated' | 'policy.activated' | 'policy.paused',
    familyId: string,
    policy: PolicyRow,
  ) {
    await deps.changes.child(policy.child_id);
    await deps.events.publish(type, familyId, policyEventData(policy));
  }

  /**
   * Writes rules and bumps the version once, in one transaction; answers every rule. One
   * policy.updated follows the commit.
   */
  async function writeRules(policyId: string, familyId: string, rules: RuleWrite[]) {
    const written = await db.transaction().execute(async (trx) => {
      await upsertRules(trx, policyId, rules, clock.now());
      const policy = await bumpPolicy(trx, policyId, clock.now());
      return { policy, rules: await listRules(trx, policyId) };
    });
    await publish('policy.updated', familyId, written.policy);
    return written.rules;
  }

  return {
    requirePolicy,

    /**
     * For devices and enforcement (no caller to check: they hold the child's id from a
     * device key or a job): the child's policy in force with its rules, or undefined.
     */
    async activePolicyOf(childId: string) {
      const policy = await findActivePolicy(db, childId);
      return policy ? { policy, rules: await listRules(db, policy.id) } : undefined;
    },

    /** Only the id and version of the policy in force (a device's conditional read). */
    async activePolicyVersionOf(childId: string) {
      const policy = await findActivePolicy(db, childId);
      return policy ? { id: policy.id, version: policy.version } : undefined;
    },

    /** The policy in force and its rules as one consistent read (what a device compiles). */
    activePolicySnapshotOf: (childId: string) => findActivePolicySnapshot(db, childId),

    async createPolicy(
      principal: Principal,
      childId: string,
      input: { name: string; priority?: number },
    ) {
      const child = await deps.children.requireChild(principal, childId, 'write');
      const name = input.name.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      const now = clock.now();
      const policy: PolicyRow = {
        id: randomUUID(),
        child_id: childId,
        name,
        status: 'draft',
        priority: input.priority ?? 0,
        version: 1,
        created_at: now,
        updated_at: now,
      };
      await insertPolicy(db, policy);
      await publish('policy.created', child.family_id, policy);
      return policy;
    },

    async listPolicies(principal: Principal, childId: string) {
      const result = await listPoliciesRead(db, childId, tenantOf(principal));
      return deps.families.visibleRows(principal, result, 'id', CHILD_NOT_FOUND);
    },

    getPolicy: (principal: Principal, policyId: string) =>
      requirePolicy(principal, policyId, 'read'),

    async updatePolicy(
      principal: Principal,
      policyId: string,
      input: { name?: string; priority?: number },
    ) {
      const { familyId } = await requirePolicyIn(principal, policyId, 'write');
      const name = input.name?.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      const policy = await bumpPolicy(db, policyId, clock.now(), {
        ...(name !== undefined ? { name } : {}),
        ...(input.priority !== undefined ? { priority: input.priority } : {}),
      });
      await publish('policy.updated', familyId, policy);
      return policy;
    },

    async setStatus(
      principal: Principal,
      policyId: string,
      status: Exclude<PolicyStatus, 'draft'>,
    ) {
      const { familyId } = await requirePolicyIn(principal, policyId, 'write');
      const policy = await bumpPolicy(db, policyId, clock.now(), { status });
      // A status change is announced as itself, not also as policy.updated.
      await publish(status === 'active' ? 'policy.activated' : 'policy.paused', familyId, policy);
      return policy;
    },

    async deletePolicy(principal: Principal, policyId: string): Promise<void> {
      const policy = await requirePolicy(principal, policyId, 'write');
      await deletePolicy(db, policyId);
      await deps.changes.child(policy.child_id);
    },

    async listRules(principal: Principal, policyId: string) {
      const result = await listRulesRead(db, policyId, tenantOf(principal));
      return deps.families.visibleRows(principal, result, 'id', POLICY_NOT_FOUND);
    },

    async putRule(principal: Principal, policyId: string, rule: RuleWrite) {
      const { familyId } = await requirePolicyIn(principal, policyId, 'write');
      checkRule(rule);
      const rules = await writeRules(policyId, familyId, [rule]);
      const written = rules.find((r) => r.category === rule.category);
      if (!written) {
        throw new Error('the rule written was not read back');
      }
      return written;
    },

    /** All or nothing: every rule is checked before any is written. */
    async putRules(principal: Principal, policyId: string, rules: RuleWrite[]) {
      const { familyId } = await requirePolicyIn(principal, policyId, 'write');
      const seen = new Set<string>();
      rules.forEach((rule, index) => {
        checkRule(rule, `/rules/${index}`);
        if (seen.has(rule.category)) {
          throw new BadRequestError(`rules[${index}].category repeats ${rule.category}`);
        }
        seen.add(rule.category);
      });
      return writeRules(policyId, familyId, rules);
    },

    async deleteRule(principal: Principal, policyId: string, category: string): Promise<void> {
      const { familyId } = await requirePolicyIn(principal, policyId, 'write');
      checkRule({ category, enabled: false, config: {} }, '', { categoryOnly: true });
      const policy = await db.transaction().execute(async (trx) => {
        if (!(await deleteRule(trx, policyId, category))) {
          throw new NotFoundError('rule not found');
        }
        return bumpPolicy(trx, policyId, clock.now());
      });
      await publish('policy.updated', familyId, policy);
    },

    async generateFromAge(
      principal: Principal,
      policyId: string,
      strictness: Strictness = 'recommended',
    ) {
      const { policy, familyId } = await requirePolicyIn(principal, policyId, 'write');
      const child = await deps.children.requireChild(principal, policy.child_id, 'read');
      const age = Math.max(0, ageOn(child.birth_date, clock.now()));
      return writeRules(policyId, familyId, rulesForAge(age, strictness).rules);
    },
  };
}

export type PoliciesService = ReturnType<typeof createPoliciesService>;
