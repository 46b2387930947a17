// Automatic enforcement (CONTRACT.md §8 "Job", §11; our rule, see docs/decisions.md): a change
// of what the child should have on its platforms is pushed without a caller asking.
// - `policy.activated` / `policy.updated` (a rule change raises the version and is published
//   as an update): only when the changed policy is active AND is the child's policy in force;
//   a change to a draft, or to an active policy outranked by another, changes nothing on the
//   platforms.
// - `policy.paused`, or an active policy deleted (the change's `activePolicyRemoved` fact; a
//   deletion has no event): when another active policy is now in force, that one is pushed;
//   with none left, the child is released (release.ts): Haven takes back what it put there.
//   Coming of age pauses every active policy in one change: one release for the child.
// - Only when the family has at least one connection (no job that could only be empty); a
//   family the change itself created has none, and is not read.
// - Coalesced: while the child has a policy_change job still pending, a further change only
//   points that job at the newer policy and version; a burst of edits becomes one run.
// - A birthday's change (fact `enforcementTrigger: 'age_change'`) queues a new `age_change`
//   job instead, one per child per change, never folded into a pending policy_change job: the
//   history shows that the age did it.
// Every decision reads the state the change leaves (listeners run at its end), so events of
// one change agree with each other whatever their order.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/schema.js';
import type { ChangeFacts } from '../../db/transaction-effects.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import type { ConnectionsService } from '../connections/service.js';
import type { DomainEvent, EventListener } from '../events/hub.js';
import type { PoliciesService } from '../policies/service.js';
import { queueRelease } from './release.js';
import { insertJob, upsertPolicyChangeJob } from './store.js';

/** A policy that stopped being active for its child in this change. */
interface Left {
  childId: string;
  policyId: string;
  policyVersion: number;
}

/** What one event asks of enforcement, read against the state the change leaves. */
type Ask = { kind: 'enforce'; childId: string; changed: string } | { kind: 'left'; left: Left };

function askOf(event: DomainEvent): Ask | undefined {
  const { child_id: childId, id, version, status } = event.data;
  if (typeof childId !== 'string' || typeof id !== 'string') {
    return undefined;
  }
  switch (event.type) {
    case 'policy.paused':
      return typeof version === 'number'
        ? { kind: 'left', left: { childId, policyId: id, policyVersion: version } }
        : undefined;
    case 'policy.activated':
    case 'policy.updated':
      return status === 'active' ? { kind: 'enforce', childId, changed: id } : undefined;
    default:
      return undefined;
  }
}

export function createPolicyChangeListener(deps: {
  clock: Clock;
  jobs: Pick<JobQueue, 'send'>;
  policies: Pick<PoliciesService, 'activePolicyVersionOf'>;
  connections: Pick<ConnectionsService, 'enforcementTargetsOf'>;
}): EventListener {
  /** Queues the job that pushes `inForce`: coalesced, or a new one for a birthday. */
  async function enforceInForce(
    trx: Transaction<Database>,
    job: { childId: string; familyId: string; inForce: { id: string; version: number } },
    trigger: 'policy_change' | 'age_change',
  ) {
    const row = {
      id: randomUUID(),
      child_id: job.childId,
      family_id: job.familyId,
      policy_id: job.inForce.id,
      policy_version: job.inForce.version,
      platform_ids: null,
      status: 'pending' as const,
      created_at: deps.clock.now(),
    };
    // In the change's transaction: the job exists exactly when the change does. Workers hear
    // of it at the commit (the queue's notification trigger).
    if (trigger === 'age_change') {
      await insertJob(trx, { ...row, trigger_type: 'age_change' });
      await deps.jobs.send(QUEUES.enforcement, { job_id: row.id }, { trx });
      return;
    }
    const { id, inserted } = await upsertPolicyChangeJob(trx, {
      ...row,
      trigger_type: 'policy_change',
    });
    if (inserted) {
      await deps.jobs.send(QUEUES.enforcement, { job_id: id }, { trx });
    }
  }

  return async (trx, events, facts: ChangeFacts, familyId) => {
    // A family this very change made (quick setup) has no connections to enforce on yet: a
    // platform is connected to a family through its id, which its maker has not been told.
    if (facts.familyCreated) {
      return;
    }
    const asks = events.map(askOf).filter((ask): ask is Ask => ask !== undefined);
    if (facts.activePolicyRemoved) {
      asks.push({ kind: 'left', left: facts.activePolicyRemoved });
    }
    if (asks.length === 0) {
      return;
    }
    // A batch is one family's: its connections are read once. A family without any (every
    // family quick setup just made) needs nothing more read.
    const targets = await deps.connections.enforcementTargetsOf(familyId, trx);
    if (targets.length === 0) {
      return;
    }
    const trigger = facts.enforcementTrigger ?? 'policy_change';
    // One job per child per change: several events of one child (coming of age pauses every
    // active policy; a birthday updates several) are one change of what it should have.
    const done = new Set<string>();
    for (const ask of asks) {
      const childId = ask.kind === 'left' ? ask.left.childId : ask.childId;
      if (done.has(childId)) {
        continue;
      }
      const inForce = await deps.policies.activePolicyVersionOf(childId, trx);
      if (ask.kind === 'enforce') {
        // A draft's or an outranked policy's change changes nothing on the platforms.
        if (inForce?.id !== ask.changed) {
          continue;
        }
        await enforceInForce(trx, { childId, familyId, inForce }, trigger);
      } else if (inForce) {
        // The platforms must not keep a paused or deleted policy while another is in force.
        await enforceInForce(trx, { childId, familyId, inForce }, trigger);
      } else {
        await queueRelease(deps, trx, { ...ask.left, familyId });
      }
      done.add(childId);
    }
  };
}
