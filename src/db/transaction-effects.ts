// One change, and everything it implies, in one transaction (docs/decisions.md "Events
// commit with their change"): a service writes its rows through `change.trx` and states the
// events the change causes with `change.emit`; before the commit, each sink (the event hub,
// whose listeners queue webhook messages and enforcement jobs) writes what it makes of them
// in the same transaction. A committed change therefore always has its webhook messages and
// jobs, and a rolled-back one never does; what leaves the process (HTTP to endpoints and
// partners) starts later, from those committed rows.
import type { Transaction } from 'kysely';
import type { AuditActor } from '../modules/audit/actor.js';
import type { Db } from './connect.js';
import type { Database } from './schema.js';

/** What a change says about itself for its sinks: the family's events, in order. */
export interface StatedEvent {
  type: string;
  data: Record<string, unknown>;
}

export interface ChangeFacts {
  /** The change made the family itself: nothing else of it (connections, webhooks) exists. */
  familyCreated?: boolean;
  /** What caused the change, when not a caller's write: the enforcement job's trigger. */
  enforcementTrigger?: 'age_change';
  /**
   * The change took an active policy away from its child without an event saying so (a
   * deletion): automatic enforcement releases the child, or enforces the active policy now in
   * force. Not a webhook event: the contract has no `policy.deleted`.
   */
  activePolicyRemoved?: { childId: string; policyId: string; policyVersion: number };
}

/**
 * One audit entry a change states (CONTRACT.md §12.1): on the family's chain when it names a
 * family, else on the org's.
 */
export interface StatedAuditEntry {
  familyId?: string | null;
  orgId?: string | null;
  actor: AuditActor;
  /** `<resource>.<verb>`. */
  action: string;
  target: { type: string; id: string };
  /** Built with audit/changes.ts: no personal value. */
  changes: Record<string, unknown>;
}

/** Everything one change stated: events grouped by family in the order first stated. */
export interface StatedEffects {
  families: Array<{ familyId: string; events: StatedEvent[]; facts: ChangeFacts }>;
  audit: StatedAuditEntry[];
}

/** Writes what a change implies, inside its transaction (an error rolls the change back). */
export type EffectSink = (trx: Transaction<Database>, effects: StatedEffects) => Promise<void>;

export interface Change {
  /** The change's transaction: every row of the change goes through it. */
  trx: Transaction<Database>;
  /**
   * States events of a family this change causes (written at the end, before the commit). A
   * fact with no event is stated too: sinks receive that family with an empty event list.
   */
  emit(familyId: string, events: readonly StatedEvent[], facts?: ChangeFacts): void;
  /** States the audit entry of this change (written at the end, before the commit). */
  audit(entry: StatedAuditEntry): void;
}

export function createChangeRunner(deps: { db: Db }) {
  const sinks: EffectSink[] = [];

  /** Writes what the change stated, in its transaction: the change commits with it or not at all. */
  async function flush(trx: Transaction<Database>, effects: StatedEffects): Promise<void> {
    if (effects.families.length === 0 && effects.audit.length === 0) {
      return;
    }
    for (const sink of sinks) {
      await sink(trx, effects);
    }
  }

  function changeOn(trx: Transaction<Database>, effects: StatedEffects): Change {
    return {
      trx,
      emit(familyId, events, facts = {}) {
        if (events.length === 0 && Object.keys(facts).length === 0) {
          return;
        }
        let family = effects.families.find((entry) => entry.familyId === familyId);
        if (!family) {
          family = { familyId, events: [], facts: {} };
          effects.families.push(family);
        }
        family.events.push(...events);
        Object.assign(family.facts, facts);
      },
      audit(entry) {
        effects.audit.push(entry);
      },
    };
  }

  /** `work` as one change inside `trx`, then what it stated, in the same transaction. */
  async function within<T>(
    trx: Transaction<Database>,
    work: (change: Change) => Promise<T>,
  ): Promise<T> {
    const effects: StatedEffects = { families: [], audit: [] };
    const result = await work(changeOn(trx, effects));
    await flush(trx, effects);
    return result;
  }

  return {
    /** Adds what every change implies from now on (called at wiring, before any change). */
    addSink(sink: EffectSink): void {
      sinks.push(sink);
    },

    /** Runs `work` as one change: its rows and everything it implies commit together. */
    run<T>(work: (change: Change) => Promise<T>): Promise<T> {
      return deps.db.transaction().execute((trx) => within(trx, work));
    },

    /** The same inside a transaction the caller already holds (its commit is the caller's). */
    within,
  };
}

export type ChangeRunner = ReturnType<typeof createChangeRunner>;
