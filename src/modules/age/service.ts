// A child's age, applied (CONTRACT.md §11.1): when the effective age on the family's clock
// differs from the one whose rules are in force — a birthday, a signal, a corrected birth
// date, a clock moved — the child's generated policies are derived again for it, in one
// change with the child's new `age_applied` and next change date, and the change is
// announced. One child per transaction: a crash loses at most the child under way, which
// stays due and is applied by the next run; none is applied twice.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import {
  type AgeChangeScope,
  type ChildRow,
  claimDueChild,
  recordAppliedAge,
} from '../children/store.js';
import type { PoliciesService } from '../policies/service.js';
import { ageOn, bandForAge, nextAgeChangeOn } from './bands.js';
import { effectiveAge } from './effective-age.js';

export const COMING_OF_AGE = 18;

/** Midnight (UTC) of a `YYYY-MM-DD` day. */
function startOf(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

export function createAgesService(deps: {
  db: Db;
  clock: Clock;
  writes: ChangeRunner;
  policies: Pick<PoliciesService, 'rederiveForAge'>;
}) {
  /**
   * Applies the effective age the child has at `at` (the child is locked by the caller's
   * transaction); `changedAt` stamps what changes. Returns whether the effective age changed.
   */
  async function applyAge(
    change: Change,
    child: ChildRow,
    at: Date,
    changedAt: Date,
  ): Promise<boolean> {
    const age = ageOn(child.birth_date, at);
    const effective = effectiveAge(age, child.counting_signals);
    const previous = child.age_applied;
    await recordAppliedAge(change.trx, child.id, {
      age: effective,
      nextChangeOn: nextAgeChangeOn(child.birth_date, at),
    });
    if (effective === previous) {
      return false;
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
    return true;
  }

  /**
   * Applies the first due age change in `scope`, at the day it fell due (a run catching up
   * missed days applies each birthday in order). False when nothing is due.
   */
  async function applyNextDue(scope: AgeChangeScope): Promise<boolean> {
    return deps.writes.run(async (change) => {
      const child = await claimDueChild(change.trx, scope);
      if (!child) {
        return false;
      }
      const at = startOf(child.next_age_change_on);
      // On the real clock a change is made now; a test clock's happen at their own moment.
      await applyAge(change, child, at, scope.clock === 'real' ? deps.clock.now() : at);
      return true;
    });
  }

  return { applyAge, applyNextDue };
}

export type AgesService = ReturnType<typeof createAgesService>;
