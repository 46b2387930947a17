// The audit entry of an enforcement job's outcome (CONTRACT.md §12.1): Haven's own act, one
// entry per finished job on its family's chain, written in the change that finishes it. A
// release's outcome is the same entry with trigger_type `release` (docs/decisions.md "An
// enforcement job's outcome in the audit log").
import type { StatedAuditEntry } from '../../db/transaction-effects.js';
import { systemActor } from '../audit/actor.js';
import type { FinishedStatus, JobRow } from './store.js';

/**
 * Why a job failed as a whole, as a class: the job's own error text may quote a partner's
 * answer or an exception, which could hold personal data.
 */
export type JobFailure = 'no_active_policy' | 'attempts_exhausted';

export function outcomeEntry(job: JobRow, failure: JobFailure | undefined): StatedAuditEntry {
  const status = job.status as FinishedStatus;
  return {
    familyId: job.family_id,
    actor: systemActor('enforcement worker'),
    action: `enforcement.${status}`,
    target: { type: 'enforcement_job', id: job.id },
    changes: {
      trigger_type: job.trigger_type,
      status,
      policy_id: job.policy_id,
      policy_version: job.policy_version,
      // Counts and statuses per platform; a platform's error_message (a partner's words) is
      // left out for the same reason as the job's.
      platforms: job.results.map((result) => ({
        platform_id: result.platform_id,
        status: result.status,
        rules_applied: result.rules_applied,
        rules_skipped: result.rules_skipped,
        rules_failed: result.rules_failed,
      })),
      ...(failure ? { failure } : {}),
    },
  };
}
