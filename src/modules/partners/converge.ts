// Converge a partner profile to a policy, the same way for every partner. The partner module
// says what each rule wants (list entries and settings, by key) and how to read and change
// its profile; this decides the changes, keeps the record of what Haven manages, and counts
// the outcome per rule.
//
// - Only what is missing or different is sent: enforcing twice changes nothing the second time.
// - Entries Haven added and no rule wants any more are removed; an entry the parent made
//   (there before Haven wanted it) is never claimed, changed or removed.
// - A setting no rule wants any more goes back to what Haven found there, unless the parent
//   has changed it since.
// - The record is written before a change is sent: a run cut off half-way leaves the next
//   run a record it converges from (removing an entry that never landed is a no-op).
import type { EnforcedRule, PlatformResult } from '../enforcement/adapter.js';
import type { ManagedState } from './managed-state-store.js';
import { PartnerError } from './partner-http.js';

/** What one rule wants on the profile. */
export interface Wanted {
  /** List entries that must be present and active, by key (`denylist:example.com`). */
  items?: string[];
  /** Settings that must hold these values, by key (`parentalControl.safeSearch`). */
  settings?: Record<string, unknown>;
}

export interface RuleMapping {
  /** The partner setting(s) the rule drives, for the mapping table in docs/decisions.md. */
  drives: string;
  map(config: Record<string, unknown>): Wanted;
}

/** A partner's rule mapping: categories absent here have no equivalent (rules_skipped). */
export type PartnerMapping = Readonly<Record<string, RuleMapping>>;

export interface ProfileSnapshot {
  /** Every list entry on the profile that Haven could manage, by key. */
  items: Map<string, { active: boolean }>;
  /** The current value of every setting Haven could manage, by key. */
  settings: Map<string, unknown>;
}

export interface ProfileWriter {
  addItem(key: string): Promise<void>;
  activateItem(key: string): Promise<void>;
  /** Removing an entry that is already gone succeeds. */
  removeItem(key: string): Promise<void>;
  setSetting(key: string, value: unknown): Promise<void>;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Several rules may want the same setting: `true` wins over `false` (the protective choice);
 * for any other value the first rule in policy order wins, so the outcome is reproducible.
 */
function combineSetting(current: unknown, next: unknown): unknown {
  if (typeof current === 'boolean' && typeof next === 'boolean') {
    return current || next;
  }
  return current;
}

export interface ConvergeInput {
  rules: EnforcedRule[];
  mapping: PartnerMapping;
  snapshot: ProfileSnapshot;
  writer: ProfileWriter;
  state: ManagedState;
  save(state: ManagedState): Promise<void>;
}

const MAX_MESSAGES = 3;

function describeFailures(messages: string[]): string {
  const distinct = [...new Set(messages)];
  const shown = distinct.slice(0, MAX_MESSAGES).join('; ');
  return distinct.length > MAX_MESSAGES
    ? `${shown}; and ${distinct.length - MAX_MESSAGES} more`
    : shown;
}

/** Every rule with a mapping fails with `message`: nothing could be done on the profile. */
export function failedWhole(
  rules: EnforcedRule[],
  mapping: PartnerMapping,
  message: string,
): PlatformResult {
  const mapped = rules.filter((rule) => mapping[rule.category] !== undefined).length;
  return {
    status: 'failed',
    rules_applied: 0,
    rules_skipped: rules.length - mapped,
    rules_failed: mapped,
    error_message: message,
  };
}

export async function converge(input: ConvergeInput): Promise<PlatformResult> {
  const { snapshot, writer } = input;
  const state: ManagedState = {
    items: [...input.state.items],
    settings: { ...input.state.settings },
  };

  // What the policy wants, and which keys each rule depends on.
  const keysOfRule = new Map<EnforcedRule, string[]>();
  const wantedItems = new Set<string>();
  const wantedSettings = new Map<string, unknown>();
  let skipped = 0;
  for (const rule of input.rules) {
    const mapping = input.mapping[rule.category];
    if (!mapping) {
      skipped++;
      continue;
    }
    const wanted = mapping.map(rule.config);
    const keys: string[] = [];
    for (const item of wanted.items ?? []) {
      wantedItems.add(item);
      keys.push(item);
    }
    for (const [key, value] of Object.entries(wanted.settings ?? {})) {
      wantedSettings.set(
        key,
        wantedSettings.has(key) ? combineSetting(wantedSettings.get(key), value) : value,
      );
      keys.push(key);
    }
    keysOfRule.set(rule, keys);
  }

  const failures = new Map<string, string>();
  let aborted: PartnerError | undefined;
  /** Runs one change; a refusal of the credentials or the profile, or an outage, ends the run. */
  async function change(key: string, send: () => Promise<void>): Promise<boolean> {
    if (aborted) {
      failures.set(key, aborted.message);
      return false;
    }
    try {
      await send();
      return true;
    } catch (error) {
      if (!(error instanceof PartnerError)) {
        throw error;
      }
      if (error.kind !== 'rejected') {
        aborted = error;
      }
      failures.set(key, error.message);
      return false;
    }
  }

  // Claim what is about to be added before adding it.
  const managed = new Set(state.items);
  const toAdd = [...wantedItems].filter((key) => !snapshot.items.has(key));
  for (const key of toAdd) {
    managed.add(key);
  }
  const settingsToSet = [...wantedSettings].filter(
    ([key, value]) => !sameValue(snapshot.settings.get(key), value),
  );
  for (const [key, value] of settingsToSet) {
    state.settings[key] = {
      original: state.settings[key]?.original ?? snapshot.settings.get(key),
      applied: value,
    };
  }
  state.items = [...managed].sort();
  await input.save(state);

  for (const key of toAdd) {
    await change(key, () => writer.addItem(key));
  }
  for (const key of wantedItems) {
    const present = snapshot.items.get(key);
    // Haven's own entry switched off on the partner's side: switch it back on. The parent's
    // own entries are left as the parent set them.
    if (present && !present.active && managed.has(key)) {
      await change(key, () => writer.activateItem(key));
    }
  }
  for (const key of [...managed]) {
    if (wantedItems.has(key)) {
      continue;
    }
    if (!snapshot.items.has(key) || (await change(key, () => writer.removeItem(key)))) {
      managed.delete(key);
    }
  }
  for (const [key, value] of settingsToSet) {
    await change(key, () => writer.setSetting(key, value));
  }
  for (const [key, setting] of Object.entries(state.settings)) {
    if (wantedSettings.has(key)) {
      continue;
    }
    const current = snapshot.settings.get(key);
    // Restored only while it still holds what Haven set: a parent's later change stands.
    const restore = sameValue(current, setting.applied) && setting.original !== undefined;
    if (!restore || (await change(key, () => writer.setSetting(key, setting.original)))) {
      delete state.settings[key];
    }
  }
  state.items = [...managed].sort();
  await input.save(state);

  let applied = 0;
  let failed = 0;
  for (const keys of keysOfRule.values()) {
    if (keys.some((key) => failures.has(key))) {
      failed++;
    } else {
      applied++;
    }
  }
  return {
    status: failures.size === 0 ? 'success' : 'failed',
    rules_applied: applied,
    rules_skipped: skipped,
    rules_failed: failed,
    error_message: failures.size === 0 ? null : describeFailures([...failures.values()]),
    ...(aborted?.kind === 'credentials' ? { credentials_refused: true as const } : {}),
  };
}
