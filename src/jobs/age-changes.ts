// The daily run of birthdays and coming of age (CONTRACT.md §11.1), for every family clock:
// - the real clock: processes running workers look for due children every `periodMs` (an
//   empty probe of the `next_age_change_on` index when nothing is due) and apply each due
//   change, so a day's birthdays are applied within a period of midnight UTC, and days missed
//   while no process ran are caught up at the next look;
// - a test clock: its advance queues an `age-changes` job that applies what fell due for the
//   clock's families up to its frozen time, in order, purges what fell out of retention by
//   then (CONTRACT.md §12.4), then marks the clock ready.
// Several processes share the due children (claimDueChildren skips the ones another holds).
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import type { AgesService } from '../modules/age/service.js';
import type { AgeChangeScope } from '../modules/children/store.js';
import type { RetentionService } from '../modules/retention/service.js';
import type { AgeChangeJobData } from '../modules/test-clocks/service.js';
import { findClockById, finishAdvance } from '../modules/test-clocks/store.js';
import type { JobQueue } from './queue.js';
import { QUEUES } from './queues.js';
import { type RepeatingTask, repeatEvery } from './repeating-task.js';

/** How often the real clock's run looks for due children. */
export const AGE_RUN_PERIOD_MS = 60_000;

const day = (at: Date) => at.toISOString().slice(0, 10);

export function startAgeChanges(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  jobs: Pick<JobQueue, 'handle'>;
  ages: Pick<AgesService, 'applyDue'>;
  /** The clock's families' retention purge, by the clock's time (the real clock's is daily). */
  retention: Pick<RetentionService, 'purgeTestClock'>;
  /** Whether this process runs background work (else another process does). */
  runWorkers: boolean;
  periodMs?: number;
}): RepeatingTask {
  let stopping = false;

  deps.jobs.handle<AgeChangeJobData>(QUEUES.ageChanges, async (data) => {
    const clock =
      typeof data?.test_clock_id === 'string'
        ? await findClockById(deps.db, data.test_clock_id)
        : undefined;
    if (!clock) {
      return; // deleted since: its families are back on the real clock
    }
    await applyAll({ clock: clock.id, until: day(new Date(clock.frozen_time)) });
    if (!stopping) {
      await deps.retention.purgeTestClock(clock.id);
    }
    if (stopping) {
      throw new Error('stopped before the test clock run finished'); // handed out again
    }
    await finishAdvance(deps.db, clock.id);
  });

  /**
   * Applies every change due in `scope`, batch after batch in the order they fell due. Between
   * batches the loop yields: on PGlite a statement completes without passing through the
   * event loop, and a long run would otherwise hold the process (no timer, no request).
   */
  async function applyAll(scope: AgeChangeScope): Promise<number> {
    let applied = 0;
    for (;;) {
      const batch = stopping ? 0 : await deps.ages.applyDue(scope);
      if (batch === 0) {
        return applied;
      }
      applied += batch;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Applies every change due today on the real clock. */
  async function runRealClock(): Promise<void> {
    const today = day(deps.clock.now());
    const applied = await applyAll({ clock: 'real', today });
    if (applied > 0) {
      deps.log.info({ applied, day: today }, 'age changes applied');
    }
  }

  if (!deps.runWorkers) {
    return { stop: async () => {} };
  }
  const task = repeatEvery(deps.periodMs ?? AGE_RUN_PERIOD_MS, runRealClock, (error) =>
    deps.log.warn({ err: error }, 'age change run failed; the next run resumes it'),
  );
  return {
    async stop() {
      stopping = true;
      await task.stop();
    },
  };
}
