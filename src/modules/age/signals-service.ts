// Age signals (CONTRACT.md §11.2): a platform's or verifier's statement of a child's age
// range. Recording one keeps the child's counting signals (the latest of each source) in
// the same change, and when that moves the effective age the change is a birthday at once:
// the age rules are derived again and announced before the answer is sent.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import { CHILD_NOT_FOUND, type ChildrenService } from '../children/service.js';
import { lockChild } from '../children/store.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import { childAgeOn } from './effective-age.js';
import { type AgesService, auditAppliedAge } from './service.js';
import { isAgeSignalSource, withSignal } from './signals.js';
import {
  type AgeSignalRow,
  insertAgeSignal,
  listAgeSignalsRead,
  setCountingSignals,
} from './signals-store.js';

/** The oldest age a signal may state (either bound). */
export const MAX_SIGNAL_AGE = 120;
export const MAX_METHOD_LENGTH = 64;

export const AGE_SIGNAL_MESSAGES = {
  ageLower: `age_lower must be an integer from 0 to ${MAX_SIGNAL_AGE}, or null`,
  ageUpper: `age_upper must be an integer from 0 to ${MAX_SIGNAL_AGE}, or null`,
  noBound: 'age_lower or age_upper is required',
  inverted: 'age_lower must not be greater than age_upper',
  future: 'observed_at must not be in the future',
  method: `method must be at most ${MAX_METHOD_LENGTH} characters`,
} as const;

export interface AgeSignalInput {
  source: string;
  /** Absent is null: that side of the range is open. */
  age_lower?: number | null;
  age_upper?: number | null;
  method?: string | null;
  observed_at?: string;
}

function checkBound(value: number | null | undefined, message: string): number | null {
  if (value === undefined || value === null) {
    return null;
  }
  if (!Number.isInteger(value) || value < 0 || value > MAX_SIGNAL_AGE) {
    throw new BadRequestError(message);
  }
  return value;
}

/**
 * The signal as it will be stored, or the 400 naming what is wrong. The route's schema
 * already refused wrong types; these checks repeat the ones a schema cannot say (and keep
 * the service right for any caller).
 */
function checkSignal(childId: string, input: AgeSignalInput, now: Date): AgeSignalRow {
  if (!isAgeSignalSource(input.source)) {
    throw new BadRequestError(`unknown age signal source: ${input.source}`);
  }
  const lower = checkBound(input.age_lower, AGE_SIGNAL_MESSAGES.ageLower);
  const upper = checkBound(input.age_upper, AGE_SIGNAL_MESSAGES.ageUpper);
  if (lower === null && upper === null) {
    throw new BadRequestError(AGE_SIGNAL_MESSAGES.noBound);
  }
  if (lower !== null && upper !== null && lower > upper) {
    throw new BadRequestError(AGE_SIGNAL_MESSAGES.inverted);
  }
  const method = input.method ?? null;
  if (method !== null && method.length > MAX_METHOD_LENGTH) {
    throw new BadRequestError(AGE_SIGNAL_MESSAGES.method);
  }
  let observedAt = now;
  if (input.observed_at !== undefined) {
    observedAt = new Date(input.observed_at);
    if (Number.isNaN(observedAt.getTime())) {
      throw new BadRequestError('observed_at must be a valid date-time');
    }
    // The family's now: on a test clock, "the future" is past its frozen time.
    if (observedAt.getTime() > now.getTime()) {
      throw new BadRequestError(AGE_SIGNAL_MESSAGES.future);
    }
  }
  return {
    id: randomUUID(),
    child_id: childId,
    source: input.source,
    age_lower: lower,
    age_upper: upper,
    method,
    observed_at: observedAt,
    created_at: now,
  };
}

/** The AgeSignal as the API shows it (the family and child exports write the same). */
export function presentAgeSignal(row: AgeSignalRow) {
  return {
    id: row.id,
    child_id: row.child_id,
    source: row.source,
    age_lower: row.age_lower,
    age_upper: row.age_upper,
    method: row.method,
    observed_at: row.observed_at,
    created_at: row.created_at,
  };
}

/** The same, JSON-ready: what the `child.age_signal` event carries. */
function eventSignal(row: AgeSignalRow) {
  return {
    ...presentAgeSignal(row),
    observed_at: row.observed_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

export function createAgeSignalsService(deps: {
  db: Db;
  writes: ChangeRunner;
  children: Pick<ChildrenService, 'requireChildAt'>;
  families: Pick<FamiliesService, 'visibleRows'>;
  ages: Pick<AgesService, 'applyAge'>;
  /** A signal that moves the effective age may change the policy in force's version. */
  policyChanges: Pick<PolicyChanges, 'child'>;
}) {
  return {
    async recordSignal(principal: Principal, childId: string, input: AgeSignalInput) {
      const { child, now } = await deps.children.requireChildAt(principal, childId, 'write');
      const signal = checkSignal(child.id, input, now);
      const ageMoved = await deps.writes.run(async (change) => {
        // Signals and birthdays of one child take turns, each seeing the other's result.
        const locked = await lockChild(change.trx, child.id);
        if (!locked) {
          throw new NotFoundError(CHILD_NOT_FOUND); // deleted since it was read
        }
        await insertAgeSignal(change.trx, signal);
        const current = await setCountingSignals(
          change.trx,
          child.id,
          withSignal(locked.counting_signals, {
            id: signal.id,
            source: signal.source,
            age_lower: signal.age_lower,
            age_upper: signal.age_upper,
            observed_at: signal.observed_at.toISOString(),
          }),
        );
        const age = childAgeOn(current, now);
        // Every accepted signal is announced, counting or not: the record of what each
        // platform said is the family's to follow, and the event says where the child stands.
        change.emit(current.family_id, [
          {
            type: 'child.age_signal',
            data: {
              child_id: child.id,
              signal: eventSignal(signal),
              effective_age: age.effective_age,
              age_conflict: age.age_conflict,
            },
          },
        ]);
        // The effect of a birthday, now: rules derived again for the new effective age.
        const applied = await deps.ages.applyAge(change, current, now, now);
        // One entry for the request: the signal (a platform's statement of an age range, its
        // settings) and, when it moved the age, what that applied.
        change.audit({
          familyId: current.family_id,
          actor: actorOf(principal),
          action: 'child.age_signal',
          target: { type: 'child', id: child.id },
          changes: {
            signal_id: signal.id,
            source: signal.source,
            age_lower: signal.age_lower,
            age_upper: signal.age_upper,
            method: signal.method,
            observed_at: signal.observed_at.toISOString(),
            ...(applied ? auditAppliedAge(applied) : {}),
          },
        });
        return applied !== undefined;
      });
      if (ageMoved) {
        await deps.policyChanges.child(child.id);
      }
      return presentAgeSignal(signal);
    },

    async listSignals(principal: Principal, childId: string) {
      const result = await listAgeSignalsRead(deps.db, childId, tenantOf(principal));
      return deps.families
        .visibleRows(principal, result, 'id', CHILD_NOT_FOUND)
        .map(presentAgeSignal);
    },
  };
}

export type AgeSignalsService = ReturnType<typeof createAgeSignalsService>;
