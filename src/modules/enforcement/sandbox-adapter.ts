// The sandbox's adapter for every catalog platform: deterministic, no network. It applies
// what the platform's capabilities cover and skips the rest, unless the developer armed a
// failure for this (family, platform) through POST /sandbox/platforms/{id}/fail.
import type { PlatformAdapter } from './adapter.js';
import { coverageOf } from './capability-coverage.js';

/** Takes one armed failure for the pair, if any: its message. */
export type TakeArmedFailure = (
  familyId: string,
  platformId: string,
) => Promise<string | undefined>;

export function createSandboxAdapter(takeArmedFailure: TakeArmedFailure): PlatformAdapter {
  return {
    async apply(input) {
      const { enforceable, skipped } = coverageOf(input.platform, input.rules);
      const failure = await takeArmedFailure(input.familyId, input.platform.platform_id);
      if (failure !== undefined) {
        return {
          status: 'failed',
          rules_applied: 0,
          rules_skipped: skipped.length,
          rules_failed: enforceable.length,
          error_message: `simulated failure (sandbox): ${failure}`,
        };
      }
      return {
        status: 'success',
        rules_applied: enforceable.length,
        rules_skipped: skipped.length,
        rules_failed: 0,
        error_message: null,
      };
    },
  };
}
