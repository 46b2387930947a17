// A child's age, applied (CONTRACT.md §11.1): when the effective age on the family's clock
// differs from the one whose rules are in force — a birthday, a signal, a corrected birth
// date, a clock moved — the child's generated policies are derived again for it, in one
// change with the child's new `age_applied` and next change date, and the change is
// announced. A run applies due children in small batches, each one transaction: a crash
// loses at most the batch under way, which stays due and is applied by the next run; none is
// applied twice.
//
// Each age a run applies is one act of Haven's with one audit entry (CONTRACT.md §12.1):
// `child.age_changed`, or `child.came_of_age` for the birthday that makes the child 18, by
// the system actor of the clock it ran on (`age run` on the real clock, `test clock` for a
// test clock's advance). An age applied inside a caller's change (an age signal) is that
// change's: its caller's entry says what it applied (auditAppliedAge).
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import type { Metrics } from '../../telemetry/metrics.js';
import { systemActor } from '../audit/actor.js';
import {
  type AgeChangeScope,
  type ChildRow,
  claimDueChildren,
  recordAppliedAge,
} from '../children/store.js';
import type { PoliciesService } from '../policies/service.js';
import { ageOn, bandForAge, nextAgeChangeOn } from './bands.js';
import { effectiveAge } from './effective-age.js';

export const COMING_OF_AGE = 18;

/**
 * Children applied per transaction by a run: one commit for the batch instead of one each
 * (commits dominate a run on PostgreSQL), while a crash rolls back few enough to redo.
 */
const AGE_CHANGES_PER_TRANSACTION = 25;

/** What applying an age changed: the age whose rules are now in force, and the policies moved. */
export interface AppliedAge {
  ageApplied: number;
  cameOfAge: boolean;
  policies: Array<{ policy_id: string; version: number; changed_categories: string[] }>;
}

/** The audit `changes` of an applied age: settings only (an age, versions, categories). */
export function auditAppliedAge(applied: AppliedAge): Record<string, unknown> {
  return {
    age_applied: applied.ageApplied,
    ...(applied.cameOfAge ? { came_of_age: true } : {}),
    policies: applied.policies,
  };
}

/** Midnight (UTC) of a `YYYY-MM-DD` day. */
function startOf(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

export function createAgesService(deps: {
  db: Db;
  clock: Clock;
  writes: ChangeRunner;
  policies: Pick<PoliciesService, 'rederiveForAge'>;
  /** Counts the ages a run applied (`haven_age_changes_total`), once their batch commits. */
  metrics?: Pick<Metrics, 'ageChanged'>;
}) {
  /**
   * Applies the effective age the child has at `at` (the child is locked by the caller's
   * transaction); `changedAt` stamps what changes. Returns what changed, or undefined when the
   * effective age did not.
   */
  async function applyAge(
    change: Change,
    child: ChildRow,
    at: Date,
    changedAt: Date,
  ): Promise<AppliedAge | undefined> {
    const age = ageOn(child.birth_date, at);
    const effective = effectiveAge(age, child.counting_signals);
    const previous = child.age_applied;
    await recordAppliedAge(change.trx, child.id, {
      age: effective,
      nextChangeOn: nextAgeChangeOn(child.birth_date, at),
    });
    if (effective === previous) {
      return undefined;
    }
    const comingOfAge =
      effective >= COMING_OF_AGE && (previous === null || previous < COMING_OF_AGE);
    const policies = await deps.policies.rederiveForAge(change, {
      childId: child.id,
      familyId: child.family_id,
      age: effective,
      comingOfAge,
      now: changedAt,
    });
    // A child first applied (made before birthdays existed) is announced only if its rules moved.
    if (previous !== null || policies.length > 0) {
      change.emit(child.family_id, [
        {
          type: 'child.age_changed',
          data: {
            child_id: child.id,
            age,
            effective_age: effective,
            age_group: bandForAge(effective).group,
            previous_age_group: previous === null ? null : bandForAge(previous).group,
            policies,
          },
        },
      ]);
    }
    if (comingOfAge) {
      change.emit(child.family_id, [
        { type: 'child.came_of_age', data: { child_id: child.id, age: effective } },
      ]);
    }
    return { ageApplied: effective, cameOfAge: comingOfAge, policies };
  }

  /**
   * Applies the first due age changes in `scope` (at most `limit`, in one transaction: one
   * commit for the batch), each at the day it fell due, so a run catching up missed days
   * applies each birthday in order. Answers how many it applied (0: nothing is due).
   */
  async function applyDue(scope: AgeChangeScope, limit = AGE_CHANGES_PER_TRANSACTION) {
    const actor = systemActor(scope.clock === 'real' ? 'age run' : 'test clock');
    let changed = 0;
    const claimed = await deps.writes.run(async (change) => {
      changed = 0;
      const children = await claimDueChildren(change.trx, scope, limit);
      for (const child of children) {
        const at = startOf(child.next_age_change_on);
        // On the real clock a change is made now; a test clock's happen at their own moment.
        const applied = await applyAge(
          change,
          child,
          at,
          scope.clock === 'real' ? deps.clock.now() : at,
        );
        if (applied) {
          changed++;
          change.audit({
            familyId: child.family_id,
            actor,
            action: applied.cameOfAge ? 'child.came_of_age' : 'child.age_changed',
            target: { type: 'child', id: child.id },
            changes: auditAppliedAge(applied),
          });
        }
      }
      return children.length;
    });
    deps.metrics?.ageChanged(changed);
    return claimed;
  }

  return { applyAge, applyDue };
}

export type AgesService = ReturnType<typeof createAgesService>;
