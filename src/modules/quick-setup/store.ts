// SQL of quick setup: the one operation that writes a family, a child, a policy and its
// rules together, so it owns a transaction over all of them. Each step finds before it
// creates: an identical call repairs whatever a crashed earlier call left half-made.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { ChildRow } from '../children/store.js';
import type { FamilyRow } from '../families/store.js';
import type { PolicyRow, PolicyRuleRow, RuleWrite } from '../policies/store.js';

export interface QuickSetupWrite {
  family: { existingId?: string; create?: FamilyRow; ownerUserId?: string };
  /** `id` fixes the child's id when it has to be created (the seeded demo children). */
  child: { name: string; birth_date: string; id?: string };
  policyName: string;
  rules: RuleWrite[];
  now: Date;
}

export interface QuickSetupRows {
  family: FamilyRow;
  child: ChildRow;
  policy: PolicyRow;
  rules: PolicyRuleRow[];
  /** What this call wrote, so the caller announces exactly that (policy `updated`: repaired). */
  wrote: { child: boolean; policy: 'created' | 'updated' | 'none' };
}

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
    created_at: input.now,
    updated_at: input.now,
  };
}

function newRules(input: QuickSetupWrite, policyId: string, rules: RuleWrite[]) {
  return rules.map((rule) => ({
    id: randomUUID(),
    policy_id: policyId,
    ...rule,
    created_at: input.now,
    updated_at: input.now,
  }));
}

/** A brand-new family has nothing to find or repair: straight inserts, rules returned. */
async function writeIntoNewFamily(
  trx: Db,
  input: QuickSetupWrite,
  family: FamilyRow,
): Promise<QuickSetupRows> {
  const { now } = input;
  await trx.insertInto('families').values(family).execute();
  if (input.family.ownerUserId) {
    await trx
      .insertInto('family_members')
      .values({
        id: randomUUID(),
        family_id: family.id,
        user_id: input.family.ownerUserId,
        role: 'owner',
        joined_at: now,
      })
      .execute();
  }
  const child = newChild(input, family.id);
  await trx.insertInto('children').values(child).execute();
  const policy = newPolicy(input, child.id);
  await trx.insertInto('policies').values(policy).execute();
  const rules = await trx
    .insertInto('policy_rules')
    .values(newRules(input, policy.id, input.rules))
    .returningAll()
    .execute();
  rules.sort((a, b) => (a.category < b.category ? -1 : 1));
  return { family, child, policy, rules, wrote: { child: true, policy: 'created' } };
}

export async function writeQuickSetup(db: Db, input: QuickSetupWrite): Promise<QuickSetupRows> {
  const { now } = input;
  return db.transaction().execute(async (trx) => {
    const created = input.family.create;
    if (created) {
      return writeIntoNewFamily(trx, input, created);
    }
    const family = await trx
      .selectFrom('families')
      .selectAll()
      .where('id', '=', input.family.existingId ?? '')
      .executeTakeFirstOrThrow();
    // Identical calls queue here, so they find each other's child instead of making two.
    const dedupe = `${family.id}\n${input.child.name}\n${input.child.birth_date}`;
    await sql`select pg_advisory_xact_lock(hashtext(${dedupe}))`.execute(trx);

    let child = await trx
      .selectFrom('children')
      .selectAll()
      .where('family_id', '=', family.id)
      .where('name', '=', input.child.name)
      .where('birth_date', '=', input.child.birth_date)
      .orderBy('created_at')
      .executeTakeFirst();
    const childIsNew = !child;
    if (!child) {
      child = newChild(input, family.id);
      await trx.insertInto('children').values(child).execute();
    }

    let policy = await trx
      .selectFrom('policies')
      .selectAll()
      .where('child_id', '=', child.id)
      .where('name', '=', input.policyName)
      .orderBy('created_at')
      .executeTakeFirst();
    const policyIsNew = !policy;
    if (!policy) {
      policy = newPolicy(input, child.id);
      await trx.insertInto('policies').values(policy).execute();
    }
    const policyId = policy.id;

    const present = new Set(
      (
        await trx
          .selectFrom('policy_rules')
          .select('category')
          .where('policy_id', '=', policyId)
          .execute()
      ).map((row) => row.category),
    );
    const missing = input.rules.filter((rule) => !present.has(rule.category));
    if (missing.length > 0) {
      await trx
        .insertInto('policy_rules')
        .values(newRules(input, policyId, missing))
        .execute();
    }
    // A repair is one change of the policy. A policy its family paused stays paused: that was
    // a decision, not a half-made setup.
    if (!policyIsNew && missing.length > 0) {
      policy = await trx
        .updateTable('policies')
        .set({ version: sql`version + 1`, updated_at: now })
        .where('id', '=', policyId)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    const rules = await trx
      .selectFrom('policy_rules')
      .selectAll()
      .where('policy_id', '=', policyId)
      .where(
        'category',
        'in',
        input.rules.map((rule) => rule.category),
      )
      .orderBy('category')
      .execute();
    const wrote = {
      child: childIsNew,
      policy: policyIsNew
        ? ('created' as const)
        : missing.length > 0
          ? ('updated' as const)
          : ('none' as const),
    };
    return { family, child, policy, rules, wrote };
  });
}
