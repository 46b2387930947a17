// Automatic enforcement (CONTRACT.md §8 "Job"; our rule, see docs/decisions.md): a change of
// the child's policy in force is pushed to the family's platforms without a caller asking.
// - `policy.activated` / `policy.updated` (a rule change raises the version and is published
//   as an update): only when the changed policy is active AND is the child's policy in force;
//   a change to a draft, or to an active policy outranked by another, changes nothing on the
//   platforms.
// - `policy.paused`: when another active policy is now in force, that one is pushed (the
//   platforms must not keep enforcing a paused policy while another is in force). With none
//   left, nothing is queued: there is nothing to enforce, and platforms keep what they had.
// - Only when the family has at least one connection (no job that could only be empty); a
//   family the change itself created has none, and is not read.
// - Coalesced: while the child has a policy_change job still pending, a further change only
//   points that job at the newer policy and version; a burst of edits becomes one run.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/schema.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import type { ConnectionsService } from '../connections/service.js';
import type { DomainEvent, EventListener } from '../events/hub.js';
import type { PoliciesService } from '../policies/service.js';
import { upsertPolicyChangeJob } from './store.js';

const TRIGGERS: ReadonlySet<DomainEvent['type']> = new Set([
  'policy.activated',
  'policy.updated',
  'policy.paused',
]);

/** Whether the event changed what the platforms should enforce (see the rule above). */
function changesWhatIsInForce(event: DomainEvent, inForce: { id: string }): boolean {
  if (event.type === 'policy.paused') {
    return inForce.id !== event.data.id;
  }
  return event.data.status === 'active' && inForce.id === event.data.id;
}

export function createPolicyChangeListener(deps: {
  clock: Clock;
  jobs: Pick<JobQueue, 'send'>;
  policies: Pick<PoliciesService, 'activePolicyVersionOf'>;
  connections: Pick<ConnectionsService, 'enforcementTargetsOf'>;
}): EventListener {
  /** Queues (or retargets) the child's pending job, when the event changed what is in force. */
  async function onEvent(
    trx: Transaction<Database>,
    event: DomainEvent,
    hasConnections: () => Promise<boolean>,
  ) {
    const childId = event.data.child_id;
    if (!TRIGGERS.has(event.type) || typeof childId !== 'string') {
      return;
    }
    // Connections first: a family without any (every family quick setup just made) needs
    // nothing more read.
    if (!(await hasConnections())) {
      return;
    }
    const inForce = await deps.policies.activePolicyVersionOf(childId, trx);
    if (!inForce || !changesWhatIsInForce(event, inForce)) {
      return;
    }
    // In the change's transaction: the job exists exactly when the change does. Workers hear
    // of it at the commit (the queue's notification trigger).
    const { id: jobId, inserted } = await upsertPolicyChangeJob(trx, {
      id: randomUUID(),
      child_id: childId,
      family_id: event.familyId,
      policy_id: inForce.id,
      policy_version: inForce.version,
      trigger_type: 'policy_change',
      platform_ids: null,
      status: 'pending',
      created_at: deps.clock.now(),
    });
    if (inserted) {
      await deps.jobs.send(QUEUES.enforcement, { job_id: jobId }, { trx });
    }
  }

  return async (trx, events, facts) => {
    // A family this very change made (quick setup) has no connections to enforce on yet: a
    // platform is connected to a family through its id, which its maker has not been told.
    if (facts.familyCreated) {
      return;
    }
    // A batch is one family's: its connections are read once, and only if an event asks.
    let connected: Promise<boolean> | undefined;
    const hasConnections = () => {
      const familyId = events[0]?.familyId ?? '';
      connected ??= deps.connections
        .enforcementTargetsOf(familyId, trx)
        .then((targets) => targets.length > 0);
      return connected;
    };
    for (const event of events) {
      await onEvent(trx, event, hasConnections);
    }
  };
}
