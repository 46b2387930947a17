// "Now" for a family (CONTRACT.md §11): the frozen time of the sandbox test clock it is
// attached to, else the real clock. Reads carry the clock's time among the family's facts
// (families/store.ts), so resolving it costs no statement; writers without those facts ask
// by family id.
import { sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';

export interface FamilyClock {
  /** The family's now, from the facts read with it. */
  nowOf(facts: { vis_clock_time: Date | null }): Date;
  /** The family's now, by its id (one statement; the real clock when there is no family). */
  nowFor(familyId: string, db?: Db): Promise<Date>;
}

export function createFamilyClock(deps: { db: Db; clock: Clock }): FamilyClock {
  return {
    nowOf: (facts) => (facts.vis_clock_time ? new Date(facts.vis_clock_time) : deps.clock.now()),
    async nowFor(familyId, db = deps.db) {
      const row = await db
        .selectFrom('families as f')
        .innerJoin('test_clocks as t', 't.id', 'f.test_clock_id')
        .select(sql<Date>`t.frozen_time`.as('frozen_time'))
        .where('f.id', '=', familyId)
        .executeTakeFirst();
      return row ? new Date(row.frozen_time) : deps.clock.now();
    },
  };
}
