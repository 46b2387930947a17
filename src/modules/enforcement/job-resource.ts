// An enforcement job as the API and its events show it: JSON-ready (ISO timestamps), fields
// picked from the row (platform_ids, family_id and the operator-facing error stay inside).
import type { JobRow, PlatformOutcome } from './store.js';

export interface EnforcementJobResource {
  [field: string]: unknown;
  id: string;
  child_id: string;
  policy_id: string;
  policy_version: number;
  trigger_type: JobRow['trigger_type'];
  status: JobRow['status'];
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  results: PlatformOutcome[];
}

const iso = (at: Date | null) => (at === null ? null : new Date(at).toISOString());

export function jobResource(row: JobRow): EnforcementJobResource {
  return {
    id: row.id,
    child_id: row.child_id,
    policy_id: row.policy_id,
    policy_version: row.policy_version,
    trigger_type: row.trigger_type,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
    results: row.results.map((result) => ({
      platform_id: result.platform_id,
      connection_id: result.connection_id,
      status: result.status,
      rules_applied: result.rules_applied,
      rules_skipped: result.rules_skipped,
      rules_failed: result.rules_failed,
      error_message: result.error_message,
    })),
  };
}
