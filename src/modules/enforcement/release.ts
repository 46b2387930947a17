// Release (CONTRACT.md §11.4): a job that converges every connected platform of a child's
// family to "nothing Haven wants for this child". Queued when the child's last active policy
// is paused or deleted (which covers coming of age: its policies are paused), and by any
// service that must release a child inside its own change (erasure): `releaseChild` writes
// the job row and its queue message in that change's transaction, so the job exists exactly
// when the change does. What a release does when it runs is in worker.ts; its outcome is
// audited like any job's, with trigger_type `release` (outcome-entry.ts).
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/schema.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import type { ConnectionsService } from '../connections/service.js';
import { upsertReleaseJob } from './store.js';

export interface ReleaseInput {
  childId: string;
  familyId: string;
  /** The policy released (a job names one: the last that was in force). */
  policyId: string;
  policyVersion: number;
}

export interface ReleaseDeps {
  clock: Clock;
  jobs: Pick<JobQueue, 'send'>;
  connections: Pick<ConnectionsService, 'enforcementTargetsOf'>;
}

/**
 * Queues the release job in `trx`, whether or not the family has connections (the caller
 * checked, or wants the job regardless); answers the job's id.
 */
export async function queueRelease(
  deps: Omit<ReleaseDeps, 'connections'>,
  trx: Transaction<Database>,
  input: ReleaseInput,
): Promise<string> {
  const { id, inserted } = await upsertReleaseJob(trx, {
    id: randomUUID(),
    child_id: input.childId,
    family_id: input.familyId,
    policy_id: input.policyId,
    policy_version: input.policyVersion,
    trigger_type: 'release',
    platform_ids: null,
    status: 'pending',
    created_at: deps.clock.now(),
  });
  if (inserted) {
    await deps.jobs.send(QUEUES.enforcement, { job_id: id }, { trx });
  }
  return id;
}

/**
 * Releases a child inside the caller's change. A family without connections has nothing to
 * converge: no job is queued (undefined), as for any automatic job.
 */
export function createRelease(deps: ReleaseDeps) {
  return async function releaseChild(
    trx: Transaction<Database>,
    input: ReleaseInput,
  ): Promise<string | undefined> {
    const targets = await deps.connections.enforcementTargetsOf(input.familyId, trx);
    if (targets.length === 0) {
      return undefined;
    }
    return queueRelease(deps, trx, input);
  };
}

export type ReleaseChild = ReturnType<typeof createRelease>;
