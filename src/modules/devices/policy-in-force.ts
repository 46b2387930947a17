// docs/decisions.md "The device poll from memory". Every instance keeps, per child, which
// policy is in force and its version, so "unchanged" (304) costs no database work; and, per
// policy, the compiled body of its latest version, so a 200 costs none either once one device
// has read it.
//
// Versions can go stale: every write that changes them announces it after its commit
// (policies/policy-changes.ts) and the bus tells every instance at once; were a message lost
// (Redis away), the entry's TTL bounds the staleness, the same bound as a revoked key's
// (secret-cache.ts). No entry is kept for a child without a policy in force: that answer needs
// the database anyway (401 or 404), and a policy created later must be seen at once.
// Compiled bodies never go stale: they are keyed by version, and every change of the rules
// raises the version.
import { LRUCache } from 'lru-cache';
import { TTL_MS as KEY_CACHE_TTL_MS } from '../../cache/secret-cache.js';
import type { Clock } from '../../clock.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import type { ActivePolicySnapshot } from '../policies/store.js';
import { findRuleCategory } from '../rules/registry.js';
import { monitoringNotice } from './monitoring-notice.js';

const MAX_CHILDREN = 10_000;
/** Characters of compiled bodies kept (a 20-rule body is ~2 KB): tens of MB at most. */
const MAX_COMPILED_CHARS = 16_000_000;

export interface PolicyVersion {
  id: string;
  version: number;
}

/**
 * A compiled policy, serialised once: the response is `head + generated_at + tail`, because
 * generated_at is when the device was answered, not when the body was first compiled.
 */
export interface CompiledBody extends PolicyVersion {
  head: string;
  tail: string;
}

interface VersionEntry extends PolicyVersion {
  familyId: string;
}

/**
 * The body CONTRACT.md §8 gives a device: enabled rules only, and never an engagement
 * category (those are for platforms, which take them through the signed OCSS path), and the
 * §11.5 monitoring notice of those rules, computed here once per version. Keys in the order of
 * the CompiledPolicy schema.
 */
export function compileBody(snapshot: ActivePolicySnapshot): CompiledBody {
  const { policy } = snapshot;
  const rules = snapshot.rules
    .filter((rule) => rule.enabled && findRuleCategory(rule.category)?.engagement !== true)
    .map((rule) => ({ category: rule.category, config: rule.config }));
  return {
    id: policy.id,
    version: policy.version,
    head: `{"child_id":${JSON.stringify(policy.child_id)},"policy_id":${JSON.stringify(policy.id)},"version":${policy.version},"generated_at":"`,
    tail: `","rules":${JSON.stringify(rules)},"monitoring_notice":${JSON.stringify(monitoringNotice(rules))}}`,
  };
}

export function createPolicyInForceCache(options: {
  clock: Clock;
  changes: Pick<PolicyChanges, 'subscribe'>;
  loadVersion(childId: string): Promise<PolicyVersion | undefined>;
  loadSnapshot(childId: string): Promise<ActivePolicySnapshot | undefined>;
}) {
  const versions = new LRUCache<string, VersionEntry>({
    max: MAX_CHILDREN,
    ttl: KEY_CACHE_TTL_MS,
    // Ages judged by the clock on every read (see secret-cache.ts).
    ttlResolution: 0,
    perf: { now: () => options.clock.now().getTime() },
  });
  // By policy id: only its latest compiled version is worth keeping.
  const compiled = new LRUCache<string, CompiledBody>({
    maxSize: MAX_COMPILED_CHARS,
    sizeCalculation: (body) => body.head.length + body.tail.length,
  });
  // Raised by every change heard: a load that started before a change must not store what it
  // read, which may predate the change (the message can arrive while the load is under way).
  let changesHeard = 0;

  options.changes.subscribe((change) => {
    changesHeard++;
    if (change.kind === 'child') {
      versions.delete(change.id);
    } else if (change.kind === 'family') {
      for (const [childId, entry] of versions.entries()) {
        if (entry.familyId === change.id) {
          versions.delete(childId);
        }
      }
    } else {
      versions.clear();
    }
  });

  return {
    /** The policy in force for the child if it is in memory now (never reads). */
    knownVersion(childId: string): PolicyVersion | undefined {
      return versions.get(childId);
    },

    /** The compiled body of exactly that version if it is in memory now (never reads). */
    knownCompiled(current: PolicyVersion): CompiledBody | undefined {
      const known = compiled.get(current.id);
      return known?.version === current.version ? known : undefined;
    },

    /** The policy in force for the child: from memory, or read once and remembered. */
    async version(childId: string, familyId: string): Promise<PolicyVersion | undefined> {
      const known = versions.get(childId);
      if (known) {
        return known;
      }
      const before = changesHeard;
      const loaded = await options.loadVersion(childId);
      if (loaded && changesHeard === before) {
        versions.set(childId, { id: loaded.id, version: loaded.version, familyId });
      }
      return loaded;
    },

    /**
     * The compiled body of the policy in force, `current` being the version just looked up:
     * from memory when that version was compiled before, else read (one statement) and
     * compiled. What is read may be newer than `current`; it is what gets sent.
     */
    async compiled(childId: string, current: PolicyVersion): Promise<CompiledBody | undefined> {
      const known = compiled.get(current.id);
      if (known?.version === current.version) {
        return known;
      }
      const snapshot = await options.loadSnapshot(childId);
      if (!snapshot) {
        return undefined;
      }
      const body = compileBody(snapshot);
      const cached = compiled.get(body.id);
      if (!cached || cached.version < body.version) {
        compiled.set(body.id, body);
      }
      return body;
    },
  };
}

export type PolicyInForceCache = ReturnType<typeof createPolicyInForceCache>;
