// The daily retention purge on the real clock (CONTRACT.md §12.4), in processes running
// workers: every `periodMs` a look whether today's purge has run in this process; the first
// look of a UTC day runs it (a few index probes when nothing fell out of retention). Several
// processes may run it the same day: each family and org is purged under its row's lock, so
// the second finds nothing to remove and writes nothing. A family on a sandbox test clock is
// purged by its clock's runs instead (jobs/age-changes.ts).
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { RetentionService } from '../modules/retention/service.js';
import { type RepeatingTask, repeatEvery } from './repeating-task.js';

/** How often a process looks whether a new day's purge is due. */
export const RETENTION_RUN_PERIOD_MS = 60_000;

const day = (at: Date) => at.toISOString().slice(0, 10);

export function startRetentionRun(deps: {
  clock: Clock;
  log: FastifyBaseLogger;
  retention: Pick<RetentionService, 'runRealClock'>;
  /** Whether this process runs background work (else another process does). */
  runWorkers: boolean;
  periodMs?: number;
}): RepeatingTask {
  if (!deps.runWorkers) {
    return { stop: async () => {} };
  }
  let stopping = false;
  /** The last day whose purge this process finished (a failed run is tried again). */
  let finished: string | undefined;

  async function runToday(): Promise<void> {
    const today = day(deps.clock.now());
    if (finished === today) {
      return;
    }
    const totals = await deps.retention.runRealClock(() => stopping);
    if (stopping) {
      return;
    }
    finished = today;
    deps.log.info(totals, 'retention purge finished');
  }

  const task = repeatEvery(deps.periodMs ?? RETENTION_RUN_PERIOD_MS, runToday, (error) =>
    deps.log.warn({ err: error }, 'retention purge failed; the next look runs it again'),
  );
  return {
    async stop() {
      stopping = true;
      await task.stop();
    },
  };
}
