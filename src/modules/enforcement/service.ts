// Enforcement (CONTRACT.md §8): jobs that push a child's policy in force to the family's
// connected platforms, run by the `enforcement` queue's worker; automatic jobs on policy
// changes; releases (§11.4) that take back what Haven put there; and, in the sandbox,
// failures a developer arms to see partial and failed jobs.

import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { AppEnv } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { afterCommit } from '../../db/request-transaction.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { clampPageLimit } from '../../http/common-schemas.js';
import { BadRequestError } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import { actorOf } from '../audit/actor.js';
import { CHILD_NOT_FOUND, type ChildrenService } from '../children/service.js';
import type { ConnectionsService } from '../connections/service.js';
import type { EventHub } from '../events/hub.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import { type FamilyFacts, withoutFacts } from '../families/store.js';
import type { LivePartners } from '../partners/live-partners.js';
import type { PoliciesService } from '../policies/service.js';
import { createAdapterRegistry } from './adapter-registry.js';
import { jobResource } from './job-resource.js';
import { createPolicyChangeListener } from './policy-change.js';
import { createRelease } from './release.js';
import { createSandboxFailures } from './sandbox-failures.js';
import {
  consumeFailure,
  findJobRead,
  insertJob,
  type JobRow,
  listJobsOfChildRead,
  listJobsOfFamilies,
} from './store.js';
import { createEnforcementWorker, type EnforcementJobData } from './worker.js';

const JOB_NOT_FOUND = 'enforcement job not found';

export function createEnforcementService(deps: {
  db: Db;
  clock: Clock;
  jobs: JobQueue;
  events: Pick<EventHub, 'subscribe'>;
  writes: ChangeRunner;
  children: Pick<ChildrenService, 'requireChild'>;
  families: Pick<
    FamiliesService,
    'requireFamily' | 'listFamilies' | 'checkThrough' | 'visibleRows'
  >;
  policies: Pick<PoliciesService, 'activePolicyOf' | 'activePolicyVersionOf'>;
  connections: Pick<
    ConnectionsService,
    'enforcementTargetsOf' | 'recordEnforcement' | 'credentialsOf'
  >;
  appEnv: AppEnv;
  livePartners: LivePartners;
}) {
  const { db, clock } = deps;
  const adapters = createAdapterRegistry({
    appEnv: deps.appEnv,
    livePartners: deps.livePartners,
    takeArmedFailure: (familyId, platformId) => consumeFailure(db, familyId, platformId),
  });
  deps.jobs.handle<EnforcementJobData>(
    QUEUES.enforcement,
    createEnforcementWorker({ ...deps, adapters }),
  );
  deps.events.subscribe('enforcement', createPolicyChangeListener(deps));
  const releaseChild = createRelease(deps);

  /** Another tenant's job does not exist for the caller: 404 either way, never 403. */
  async function requireJob(principal: Principal, jobId: string): Promise<JobRow> {
    const row = await findJobRead(db, jobId, tenantOf(principal));
    deps.families.checkThrough(principal, row, JOB_NOT_FOUND, { hideForbidden: true });
    return withoutFacts(row as JobRow & FamilyFacts);
  }

  /** Requested platforms must be connected: enforcing on nothing is a caller's mistake. */
  async function checkRequested(familyId: string, platformIds: string[] | undefined) {
    if (platformIds === undefined) {
      return null;
    }
    const connected = new Set(
      (await deps.connections.enforcementTargetsOf(familyId)).map((c) => c.platform_id),
    );
    const missing = platformIds.find((id) => !connected.has(id));
    if (missing !== undefined) {
      throw new BadRequestError(`platform_ids: ${missing} is not connected to this family`);
    }
    return [...new Set(platformIds)];
  }

  return {
    /**
     * Releases a child (CONTRACT.md §11.4) inside the caller's change: `trx` gets the job row
     * and its queue message. Undefined when the family has no connection (nothing to release).
     */
    releaseChild,

    async enforce(principal: Principal, childId: string, input: { platform_ids?: string[] }) {
      const child = await deps.children.requireChild(principal, childId, 'write');
      const active = await deps.policies.activePolicyVersionOf(childId);
      if (!active) {
        throw new BadRequestError('no active policy found');
      }
      const job = {
        id: randomUUID(),
        child_id: childId,
        family_id: child.family_id,
        policy_id: active.id,
        policy_version: active.version,
        trigger_type: 'manual' as const,
        platform_ids: await checkRequested(child.family_id, input.platform_ids),
        status: 'pending' as const,
        created_at: clock.now(),
      };
      // The row, its queue message and its audit entry commit together: a job never waits
      // for a run that was not queued, and a queued run never looks for a row that does not
      // exist.
      await deps.writes.run(async (change) => {
        await insertJob(change.trx, job);
        await deps.jobs.send(QUEUES.enforcement, { job_id: job.id }, { trx: change.trx });
        change.audit({
          familyId: job.family_id,
          actor: actorOf(principal),
          action: 'enforcement.requested',
          target: { type: 'enforcement_job', id: job.id },
          changes: {
            child_id: childId,
            policy_id: job.policy_id,
            policy_version: job.policy_version,
            platform_ids: job.platform_ids,
          },
        });
      });
      afterCommit(() => deps.jobs.wake(QUEUES.enforcement));
      return jobResource({
        ...job,
        results: [],
        error: null,
        started_at: null,
        completed_at: null,
      });
    },

    getJob: async (principal: Principal, jobId: string) =>
      jobResource(await requireJob(principal, jobId)),

    async listChildJobs(principal: Principal, childId: string, limit: number) {
      const result = await listJobsOfChildRead(
        db,
        childId,
        tenantOf(principal),
        clampPageLimit(limit),
      );
      return deps.families.visibleRows(principal, result, 'id', CHILD_NOT_FOUND).map(jobResource);
    },

    /** Jobs of every family the caller can read, newest first (created_at, then id). */
    async listHistory(principal: Principal, page: { limit: number; offset: number }) {
      const families = await deps.families.listFamilies(principal);
      const rows = await listJobsOfFamilies(
        db,
        families.map((family) => family.id),
        { limit: clampPageLimit(page.limit), offset: page.offset },
      );
      return rows.map(jobResource);
    },

    /** Present on sandbox deployments only: production has no simulated failures. */
    sandboxFailures:
      deps.appEnv === 'sandbox'
        ? createSandboxFailures({ clock, writes: deps.writes, families: deps.families })
        : undefined,
  };
}

export type EnforcementService = ReturnType<typeof createEnforcementService>;
export type SandboxFailures = NonNullable<EnforcementService['sandboxFailures']>;
