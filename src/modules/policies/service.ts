// Policies of a child: draft -> active <-> paused, a version that rises by one on every
// change of the policy or its rules, rules from the closed registry.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import { ageOn } from '../age/bands.js';
import { rulesForAge, type Strictness } from '../age/derivation.js';
import { actorOf } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import { CHILD_NOT_FOUND, type ChildrenService } from '../children/service.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import { type FamilyFacts, withoutFacts } from '../families/store.js';
import { changedAgeRules } from './age-rederivation.js';
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
  lockLivePolicies,
  type PolicyRow,
  type PolicyStatus,
  type RuleWrite,
  upsertRules,
} from './store.js';

const POLICY_NOT_FOUND = 'policy not found';
const CUSTOM = { by: 'custom' } as const;
/**
 * A policy's name is free text, often the child's name (quick setup writes "<name>'s
 * Protection Policy"): the audit log names the field without its value.
 */
const POLICY_PERSONAL_FIELDS = ['name'] as const;

/** A rule as the audit log keeps it: a setting, with its values. */
const ruleChange = (rule: RuleWrite) => ({
  category: rule.category,
  enabled: rule.enabled,
  config: rule.config,
});

/** The audit verbs of a policy (CONTRACT.md §12.1: `policy.<verb>`). */
type PolicyVerb =
  | 'created'
  | 'updated'
  | 'activated'
  | 'paused'
  | 'deleted'
  | 'generated'
  | 'rule_updated'
  | 'rules_updated'
  | 'rule_deleted';

/** The Policy resource, JSON-ready: what policy.* events carry (automatic enforcement reads it). */
export function policyEventData(policy: PolicyRow) {
  return {
    id: policy.id,
    child_id: policy.child_id,
    name: policy.name,
    status: policy.status,
    priority: policy.priority,
    version: policy.version,
    strictness: policy.strictness,
    paused_reason: policy.paused_reason,
    created_at: policy.created_at.toISOString(),
    updated_at: policy.updated_at.toISOString(),
  };
}

export function createPoliciesService(deps: {
  db: Db;
  clock: Clock;
  children: Pick<ChildrenService, 'requireChild'>;
  families: Pick<FamiliesService, 'checkThrough' | 'visibleRows'>;
  writes: ChangeRunner;
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
   * States the change's event (webhooks, automatic enforcement hear it inside the change's
   * transaction): the Policy resource after the change, JSON-ready.
   */
  function emit(
    change: Change,
    type: 'policy.created' | 'policy.updated' | 'policy.activated' | 'policy.paused',
    familyId: string,
    policy: PolicyRow,
  ) {
    change.emit(familyId, [{ type, data: policyEventData(policy) }]);
  }

  /** States the change's audit entry: the caller's act on the policy. */
  function audit(
    change: Change,
    principal: Principal,
    verb: PolicyVerb,
    familyId: string,
    policyId: string,
    changes: Record<string, unknown>,
  ) {
    change.audit({
      familyId,
      actor: actorOf(principal),
      action: `policy.${verb}`,
      target: { type: 'policy', id: policyId },
      changes,
    });
  }

  /**
   * Writes a policy change and its event in one transaction, then tells every instance's
   * cache of the policy in force once it is committed (a device polling after the event's
   * webhook sees the change).
   */
  async function changePolicy(
    childId: string,
    work: (change: Change) => Promise<PolicyRow | undefined>,
  ): Promise<void> {
    await deps.writes.run(work);
    await deps.changes.child(childId);
  }

  /**
   * Writes rules and bumps the version once, in one transaction; answers every rule. One
   * policy.updated commits with them. A person's or key's rules are `custom`; generated ones
   * are `age` and set the policy's strictness.
   */
  async function writeRules(
    current: PolicyRow,
    familyId: string,
    rules: RuleWrite[],
    origin: { by: 'custom' } | { by: 'age'; strictness: Strictness },
    /** States the write's audit entry, given the policy after it. */
    audited: (change: Change, policy: PolicyRow) => void,
  ) {
    const policyId = current.id;
    let written: Awaited<ReturnType<typeof listRules>> = [];
    await changePolicy(current.child_id, async (change) => {
      await upsertRules(change.trx, policyId, rules, origin.by, clock.now());
      const policy = await bumpPolicy(
        change.trx,
        policyId,
        clock.now(),
        origin.by === 'age' ? { strictness: origin.strictness } : {},
      );
      emit(change, 'policy.updated', familyId, policy);
      audited(change, policy);
      written = await listRules(change.trx, policyId);
      return policy;
    });
    return written;
  }

  /**
   * A birthday or an age signal (CONTRACT.md §11.1), inside the change that records it: the
   * `age` rules of every active or paused policy generated from age are derived again for
   * `age` with the policy's strictness; `custom` rules and rules a person deleted stay as
   * they are. A policy whose rules changed rises one version (one policy.updated; an active
   * one is enforced with trigger `age_change`). Coming of age also pauses every active
   * policy, in the same version (policy.paused with `paused_reason: came_of_age`).
   */
  async function rederiveForAge(
    change: Change,
    input: { childId: string; familyId: string; age: number; comingOfAge: boolean; now: Date },
  ) {
    const changed: Array<{ policy_id: string; version: number; changed_categories: string[] }> = [];
    for (const policy of await lockLivePolicies(change.trx, input.childId)) {
      const rederived = policy.strictness
        ? await changedAgeRules(change.trx, policy.id, input.age, policy.strictness)
        : [];
      const pause = input.comingOfAge && policy.status === 'active';
      if (rederived.length === 0 && !pause) {
        continue;
      }
      await upsertRules(change.trx, policy.id, rederived, 'age', input.now);
      const updated = await bumpPolicy(
        change.trx,
        policy.id,
        input.now,
        pause ? { status: 'paused', paused_reason: 'came_of_age' } : {},
      );
      if (rederived.length > 0) {
        change.emit(input.familyId, [{ type: 'policy.updated', data: policyEventData(updated) }], {
          enforcementTrigger: 'age_change',
        });
      }
      if (pause) {
        emit(change, 'policy.paused', input.familyId, updated);
      }
      changed.push({
        policy_id: updated.id,
        version: updated.version,
        changed_categories: rederived.map((rule) => rule.category),
      });
    }
    return changed;
  }

  return {
    requirePolicy,
    rederiveForAge,

    /**
     * For devices and enforcement (no caller to check: they hold the child's id from a
     * device key or a job): the child's policy in force with its rules, or undefined.
     */
    async activePolicyOf(childId: string) {
      const policy = await findActivePolicy(db, childId);
      return policy ? { policy, rules: await listRules(db, policy.id) } : undefined;
    },

    /** Only the id and version of the policy in force (a device's conditional read). */
    async activePolicyVersionOf(childId: string, reader: Db = db) {
      const policy = await findActivePolicy(reader, childId);
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
        strictness: null,
        paused_reason: null,
        created_at: now,
        updated_at: now,
      };
      await changePolicy(childId, async (change) => {
        await insertPolicy(change.trx, policy);
        emit(change, 'policy.created', child.family_id, policy);
        audit(change, principal, 'created', child.family_id, policy.id, {
          ...auditChanges({ name, priority: policy.priority }, POLICY_PERSONAL_FIELDS),
          child_id: childId,
          status: policy.status,
          version: policy.version,
        });
        return policy;
      });
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
      const { policy: current, familyId } = await requirePolicyIn(principal, policyId, 'write');
      const name = input.name?.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      let policy = current;
      await changePolicy(current.child_id, async (change) => {
        policy = await bumpPolicy(change.trx, policyId, clock.now(), {
          ...(name !== undefined ? { name } : {}),
          ...(input.priority !== undefined ? { priority: input.priority } : {}),
        });
        emit(change, 'policy.updated', familyId, policy);
        audit(change, principal, 'updated', familyId, policyId, {
          ...auditChanges({ name, priority: input.priority }, POLICY_PERSONAL_FIELDS),
          version: policy.version,
        });
        return policy;
      });
      return policy;
    },

    async setStatus(
      principal: Principal,
      policyId: string,
      status: Exclude<PolicyStatus, 'draft'>,
    ) {
      const { policy: current, familyId } = await requirePolicyIn(principal, policyId, 'write');
      let policy = current;
      await changePolicy(current.child_id, async (change) => {
        // A person's pause or activation replaces a reason Haven gave.
        policy = await bumpPolicy(change.trx, policyId, clock.now(), {
          status,
          paused_reason: null,
        });
        // A status change is announced as itself, not also as policy.updated.
        emit(change, status === 'active' ? 'policy.activated' : 'policy.paused', familyId, policy);
        audit(change, principal, status === 'active' ? 'activated' : 'paused', familyId, policyId, {
          status,
          version: policy.version,
        });
        return policy;
      });
      return policy;
    },

    async deletePolicy(principal: Principal, policyId: string): Promise<void> {
      const { policy, familyId } = await requirePolicyIn(principal, policyId, 'write');
      await changePolicy(policy.child_id, async (change) => {
        await deletePolicy(change.trx, policyId);
        // No webhook event (the contract has none for a deletion), but taking an active
        // policy away changes what the platforms should hold: automatic enforcement hears it.
        if (policy.status === 'active') {
          change.emit(familyId, [], {
            activePolicyRemoved: {
              childId: policy.child_id,
              policyId,
              policyVersion: policy.version,
            },
          });
        }
        audit(change, principal, 'deleted', familyId, policyId, {});
        return policy;
      });
    },

    async listRules(principal: Principal, policyId: string) {
      const result = await listRulesRead(db, policyId, tenantOf(principal));
      return deps.families.visibleRows(principal, result, 'id', POLICY_NOT_FOUND);
    },

    async putRule(principal: Principal, policyId: string, rule: RuleWrite) {
      const { policy, familyId } = await requirePolicyIn(principal, policyId, 'write');
      checkRule(rule);
      const rules = await writeRules(policy, familyId, [rule], CUSTOM, (change, after) =>
        audit(change, principal, 'rule_updated', familyId, policyId, {
          ...ruleChange(rule),
          version: after.version,
        }),
      );
      const written = rules.find((r) => r.category === rule.category);
      if (!written) {
        throw new Error('the rule written was not read back');
      }
      return written;
    },

    /** All or nothing: every rule is checked before any is written. */
    async putRules(principal: Principal, policyId: string, rules: RuleWrite[]) {
      const { policy, familyId } = await requirePolicyIn(principal, policyId, 'write');
      const seen = new Set<string>();
      rules.forEach((rule, index) => {
        checkRule(rule, `/rules/${index}`);
        if (seen.has(rule.category)) {
          throw new BadRequestError(`rules[${index}].category repeats ${rule.category}`);
        }
        seen.add(rule.category);
      });
      return writeRules(policy, familyId, rules, CUSTOM, (change, after) =>
        audit(change, principal, 'rules_updated', familyId, policyId, {
          rules: rules.map(ruleChange),
          version: after.version,
        }),
      );
    },

    async deleteRule(principal: Principal, policyId: string, category: string): Promise<void> {
      const { policy: current, familyId } = await requirePolicyIn(principal, policyId, 'write');
      checkRule({ category, enabled: false, config: {} }, '', { categoryOnly: true });
      await changePolicy(current.child_id, async (change) => {
        if (!(await deleteRule(change.trx, policyId, category))) {
          throw new NotFoundError('rule not found');
        }
        const policy = await bumpPolicy(change.trx, policyId, clock.now());
        emit(change, 'policy.updated', familyId, policy);
        audit(change, principal, 'rule_deleted', familyId, policyId, {
          category,
          version: policy.version,
        });
        return policy;
      });
    },

    async generateFromAge(
      principal: Principal,
      policyId: string,
      strictness: Strictness = 'recommended',
    ) {
      const { policy, familyId } = await requirePolicyIn(principal, policyId, 'write');
      const child = await deps.children.requireChild(principal, policy.child_id, 'read');
      const age = Math.max(0, ageOn(child.birth_date, clock.now()));
      const generated = rulesForAge(age, strictness).rules;
      return writeRules(policy, familyId, generated, { by: 'age', strictness }, (change, after) =>
        audit(change, principal, 'generated', familyId, policyId, {
          strictness,
          rules: generated.map(ruleChange),
          version: after.version,
        }),
      );
    },
  };
}

export type PoliciesService = ReturnType<typeof createPoliciesService>;
