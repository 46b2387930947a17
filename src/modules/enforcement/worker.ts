// The enforcement job handler (queue `enforcement`, one message per job row). Idempotent: a
// finished job is skipped, a job handed out again (a crash, a thrown handler) starts over
// with no results, and results are written only by the run that still holds the job.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import type { JobContext } from '../../jobs/queue.js';
import { QUEUE_SETTINGS } from '../../jobs/queues.js';
import type { ConnectionsService } from '../connections/service.js';
import type { PoliciesService } from '../policies/service.js';
import type { EnforcedRule } from './adapter.js';
import type { AdapterRegistry } from './adapter-registry.js';
import { jobResource } from './job-resource.js';
import { type JobFailure, outcomeEntry } from './outcome-entry.js';
import {
  type FinishedStatus,
  finishJob,
  type JobRow,
  type PlatformOutcome,
  startJob,
} from './store.js';

export interface EnforcementJobData {
  job_id: string;
}

/** A platform's outcome, and whether its partner refused the connection's credentials. */
type Reached = PlatformOutcome & { credentialsRefused?: true };

type Target = Awaited<ReturnType<ConnectionsService['enforcementTargetsOf']>>[number];

/**
 * CONTRACT §8: `completed` means the policy is in force on every connected platform. Every
 * result `success` → completed; some `success` → partial; none (every result `failed` or
 * `unsupported`) → failed; no connection → completed with no results. `unsupported` is not
 * a success: the parent's policy did not reach that platform.
 */
export function jobStatusOf(results: PlatformOutcome[]): FinishedStatus {
  const succeeded = results.filter((r) => r.status === 'success').length;
  if (succeeded === results.length) {
    return 'completed';
  }
  return succeeded === 0 ? 'failed' : 'partial';
}

/** What adapters push: the enabled rules only (a disabled rule is nothing to enforce). */
function enabledRules(
  rules: Array<{ category: string; enabled: boolean; config: Record<string, unknown> }>,
): EnforcedRule[] {
  return rules
    .filter((rule) => rule.enabled)
    .map((rule) => ({ category: rule.category, config: rule.config }));
}

export function createEnforcementWorker(deps: {
  db: Db;
  clock: Clock;
  writes: ChangeRunner;
  policies: Pick<PoliciesService, 'activePolicyOf'>;
  connections: Pick<
    ConnectionsService,
    'enforcementTargetsOf' | 'recordEnforcement' | 'credentialsOf'
  >;
  adapters: AdapterRegistry;
}) {
  const { db, clock } = deps;
  const retryLimit = QUEUE_SETTINGS.enforcement.retryLimit ?? 0;

  async function enforceOn(
    job: JobRow,
    target: Target,
    policy: { id: string; version: number },
    rules: EnforcedRule[],
  ): Promise<Reached> {
    const base = { platform_id: target.platform_id, connection_id: target.id };
    const none = { rules_applied: 0, rules_skipped: 0, rules_failed: 0 };
    const resolved = deps.adapters.resolve(target.platform_id);
    if (resolved.kind === 'unsupported') {
      return { ...base, ...none, status: 'unsupported', error_message: resolved.reason };
    }
    if (target.status === 'pending') {
      return {
        ...base,
        ...none,
        status: 'failed',
        error_message: `the ${target.platform_id} connection is pending: complete it (e.g. add its credentials) before enforcing`,
      };
    }
    const { credentials_refused, ...result } = await resolved.adapter.apply({
      familyId: job.family_id,
      childId: job.child_id,
      connectionId: target.id,
      platform: resolved.platform,
      policy,
      rules,
      credentials: () => deps.connections.credentialsOf(target.id),
      // Nothing in force by then (paused or deleted while this run waited): nothing is
      // wanted. Pushing the rules read at the start would undo a release that ran meanwhile.
      latestRules: async () => {
        const active = await deps.policies.activePolicyOf(job.child_id);
        return active ? enabledRules(active.rules) : [];
      },
    });
    return { ...base, ...result, ...(credentials_refused ? { credentialsRefused: true } : {}) };
  }

  /**
   * Writes the outcome (if this run still holds the job), then tells subscribers. `failure`
   * classes a job that failed as a whole, for its audit entry.
   */
  async function finish(
    job: JobRow,
    {
      failure,
      ...outcome
    }: Omit<Parameters<typeof finishJob>[2], 'completed_at' | 'results'> & {
      results: Reached[];
      failure?: JobFailure;
    },
  ): Promise<void> {
    const at = clock.now();
    const results = outcome.results.map(({ credentialsRefused: _, ...result }) => result);
    // The outcome and its event commit together: a finished job always has its webhooks
    // (a run that finds the job finished skips it, so none could be sent later).
    await deps.writes.run(async (change) => {
      const row = await finishJob(change.trx, job.id, { ...outcome, results, completed_at: at });
      if (!row) {
        return;
      }
      await deps.connections.recordEnforcement(
        outcome.results.map((r) => ({
          connectionId: r.connection_id,
          status: r.status,
          credentialsRefused: r.credentialsRefused === true,
        })),
        at,
        change.trx,
      );
      change.emit(row.family_id, [
        { type: `enforcement.${row.status as FinishedStatus}`, data: jobResource(row) },
      ]);
      change.audit(outcomeEntry(row, failure));
    });
  }

  async function run(jobId: string): Promise<void> {
    const job = await startJob(db, jobId, clock.now());
    if (!job) {
      return; // finished already, or gone with its child or family
    }
    // Rules are not kept per version: what can be pushed is the policy in force now, and
    // pushing anything older would undo a newer change. The job records what it enforced.
    const active = await deps.policies.activePolicyOf(job.child_id);
    // A release converges to what Haven wants for the child now: nothing (every entry Haven
    // added goes, every setting it changed goes back), or, when a policy became active again
    // since the release was queued, that policy. Any other job needs a policy to push.
    const release = job.trigger_type === 'release';
    if (!active && !release) {
      await finish(job, {
        status: 'failed',
        results: [],
        policy_id: job.policy_id,
        policy_version: job.policy_version,
        error: 'no active policy found',
        failure: 'no_active_policy',
      });
      return;
    }
    const policy = active
      ? { id: active.policy.id, version: active.policy.version }
      : { id: job.policy_id, version: job.policy_version };
    const rules = active ? enabledRules(active.rules) : [];
    const wanted = job.platform_ids === null ? undefined : new Set(job.platform_ids);
    const targets = (await deps.connections.enforcementTargetsOf(job.family_id)).filter(
      (target) => wanted === undefined || wanted.has(target.platform_id),
    );
    const results: Reached[] = [];
    for (const target of targets) {
      // One at a time: a family has a handful of platforms, and the order stays reproducible.
      results.push(await enforceOn(job, target, policy, rules));
    }
    await finish(job, {
      status: jobStatusOf(results),
      results,
      policy_id: policy.id,
      policy_version: policy.version,
      error: null,
    });
  }

  return async function handleEnforcementJob(
    data: EnforcementJobData,
    context: JobContext,
  ): Promise<void> {
    if (typeof data?.job_id !== 'string') {
      return; // not ours to run; retrying would not make it valid
    }
    try {
      await run(data.job_id);
    } catch (error) {
      if (context.retryCount < retryLimit) {
        throw error; // pg-boss runs it again with backoff
      }
      // The last attempt: leave a failed job behind rather than one running forever.
      const job = await startJob(db, data.job_id, clock.now());
      if (job) {
        await finish(job, {
          status: 'failed',
          results: [],
          policy_id: job.policy_id,
          policy_version: job.policy_version,
          error: `enforcement failed after ${context.retryCount + 1} attempts: ${String(error)}`,
          failure: 'attempts_exhausted',
        });
      }
    }
  };
}
