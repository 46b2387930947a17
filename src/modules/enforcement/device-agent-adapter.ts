// Production enforcement of device platforms (Android, Apple, Microsoft, Fire, ...). No
// partner API is reachable from this build; a device is enforced by the Haven agent on it,
// which pulls the compiled policy from GET /device/policy (CONTRACT.md §8) and applies it.
// "success" therefore means the policy in force is published for the agent: the counts are
// what the platform's capabilities cover. The compiled policy leaves every engagement
// category out, so those are counted as skipped here, never as applied.
import type { PlatformAdapter } from './adapter.js';
import { coverageOf } from './capability-coverage.js';

export function createDeviceAgentAdapter(): PlatformAdapter {
  return {
    async apply(input) {
      const { enforceable, skipped } = coverageOf(input.platform, input.rules, {
        withEngagement: false,
      });
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
