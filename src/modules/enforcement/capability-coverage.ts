// Which rules a platform can enforce: a rule's registry category lists the platform
// capabilities able to enforce it (CONTRACT.md §7.1); one of them on the platform suffices.
import type { Platform } from '../platforms/catalog.js';
import { findRuleCategory } from '../rules/registry.js';
import type { EnforcedRule } from './adapter.js';

export interface Coverage {
  enforceable: EnforcedRule[];
  skipped: EnforcedRule[];
}

export function coverageOf(
  platform: Platform,
  rules: EnforcedRule[],
  options: { withEngagement: boolean } = { withEngagement: true },
): Coverage {
  const coverage: Coverage = { enforceable: [], skipped: [] };
  for (const rule of rules) {
    const category = findRuleCategory(rule.category);
    const covered =
      category !== undefined &&
      (options.withEngagement || !category.engagement) &&
      category.capabilities.some((capability) => platform.capabilities.includes(capability));
    (covered ? coverage.enforceable : coverage.skipped).push(rule);
  }
  return coverage;
}
