// The age Haven protects a child for (CONTRACT.md §11.2): the birth-date age on the family's
// clock, lowered by any counting age signal whose range ends below it, never raised.
import { ageOn, bandForAge, nextAgeChangeOn } from './bands.js';
import type { CountingSignal } from './signals.js';

export interface ChildAge {
  /** Whole years since the birth date on the family's clock. */
  age: number;
  /** The band of the effective age: the one the child's `age` rules are derived for. */
  age_group: ReturnType<typeof bandForAge>['group'];
  effective_age: number;
  /** The birth-date age lies outside a counting signal's range. */
  age_conflict: boolean;
  /** `YYYY-MM-DD`: the next birthday on the family's clock. */
  next_age_change_on: string;
}

/** The smallest of the birth-date age and every counting signal's upper bound. */
export function effectiveAge(birthAge: number, signals: readonly CountingSignal[]): number {
  let effective = Math.max(0, birthAge);
  for (const signal of signals) {
    if (signal.age_upper !== null && signal.age_upper < effective) {
      effective = signal.age_upper;
    }
  }
  return effective;
}

export function hasAgeConflict(birthAge: number, signals: readonly CountingSignal[]): boolean {
  return signals.some(
    (signal) =>
      (signal.age_lower !== null && birthAge < signal.age_lower) ||
      (signal.age_upper !== null && birthAge > signal.age_upper),
  );
}

export function childAgeOn(
  child: { birth_date: string; counting_signals: readonly CountingSignal[] },
  now: Date,
): ChildAge {
  const age = ageOn(child.birth_date, now);
  const effective = effectiveAge(age, child.counting_signals);
  return {
    age,
    age_group: bandForAge(effective).group,
    effective_age: effective,
    age_conflict: hasAgeConflict(age, child.counting_signals),
    next_age_change_on: nextAgeChangeOn(child.birth_date, now),
  };
}
