// The sandbox demo family (CONTRACT.md §6): fixed ids on every deployment and every restart,
// three children in three age bands, each with an active quick-setup policy. Every sandbox
// caller can read it; nobody can change it.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { ageOn, nextAgeChangeOn } from '../age/bands.js';
import { rulesForAge } from '../age/derivation.js';
import { writeQuickSetup } from '../quick-setup/store.js';

export const DEMO_FAMILY_ID = 'd3e0f000-0000-4000-8000-000000000001';

export const DEMO_CHILDREN = [
  { id: 'd3e0f000-0000-4000-8000-000000000011', name: 'Maya Rivera', birth_date: '2021-04-12' },
  { id: 'd3e0f000-0000-4000-8000-000000000012', name: 'Leo Rivera', birth_date: '2015-09-03' },
  { id: 'd3e0f000-0000-4000-8000-000000000013', name: 'Sofia Rivera', birth_date: '2011-02-20' },
] as const;

const DEMO_CREATED_AT = new Date('2026-01-01T00:00:00.000Z');

/** Idempotent: creates what is missing, leaves what exists. Runs at every start. */
export async function seedDemoFamily(db: Db, clock: Clock): Promise<void> {
  const family = {
    id: DEMO_FAMILY_ID,
    name: 'Rivera Family (demo)',
    org_id: null,
    environment: 'test' as const,
    test_clock_id: null,
    created_at: DEMO_CREATED_AT,
    updated_at: DEMO_CREATED_AT,
  };
  await db
    .insertInto('families')
    .values(family)
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute();
  for (const child of DEMO_CHILDREN) {
    const age = Math.max(0, ageOn(child.birth_date, clock.now()));
    await writeQuickSetup(
      db,
      {
        family: { existing: family },
        child,
        policyName: `${child.name}'s Protection Policy`,
        rules: rulesForAge(age, 'recommended').rules,
        strictness: 'recommended',
        childAge: age,
        nextAgeChangeOn: nextAgeChangeOn(child.birth_date, clock.now()),
        now: DEMO_CREATED_AT,
      },
      // The seed announces nothing: the demo family has no webhooks and no connections.
      async () => {},
    );
  }
}
