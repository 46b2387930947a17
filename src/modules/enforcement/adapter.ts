// The one interface every platform adapter implements (CONTRACT.md §8). The worker hands an
// adapter the enabled rules of the policy in force and records what it answers; whether an
// adapter talks to a partner API, a simulation or the on-device agent is its own business.
import type { Platform } from '../platforms/catalog.js';
import type { PlatformStatus } from './store.js';

export interface EnforcedRule {
  category: string;
  config: Record<string, unknown>;
}

export interface AdapterInput {
  familyId: string;
  childId: string;
  connectionId: string;
  platform: Platform;
  policy: { id: string; version: number };
  /**
   * Only the enabled rules: a disabled rule is nothing to push. Empty for a release: the
   * platform must hold nothing Haven wants for the child.
   */
  rules: EnforcedRule[];
  /** The connection's credentials, unsealed on demand (only adapters that call out need them). */
  credentials(): Promise<unknown>;
  /**
   * The enabled rules of the policy in force now (none in force: none). An adapter that
   * waited (for another run of the same partner profile) converges to these, not to what the
   * job read when it started: a run must never put back what a newer policy, a pause or a
   * release removed.
   */
  latestRules(): Promise<EnforcedRule[]>;
}

export interface PlatformResult {
  status: Exclude<PlatformStatus, 'unsupported'>;
  rules_applied: number;
  rules_skipped: number;
  rules_failed: number;
  error_message: string | null;
  /**
   * The partner refused the connection's credentials: the worker marks the connection
   * `credentials_rejected` (not part of the job's results).
   */
  credentials_refused?: true;
}

/**
 * A platform's refusal (bad credentials, an outage on its side) is a result: `failed` with
 * the reason in error_message. Throwing means trouble on our side worth retrying: the whole
 * job is run again with backoff (re-applying a policy is harmless), and after the last retry
 * the job is `failed`.
 */
export interface PlatformAdapter {
  apply(input: AdapterInput): Promise<PlatformResult>;
}
