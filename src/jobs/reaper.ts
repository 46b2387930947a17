// Hands back the jobs of dead processes. A process killed mid-job (kill -9, a lost machine)
// leaves its job `active`; pg-boss alone would hand it out again only when the job expires,
// and an expiry short enough to be prompt would also take jobs from live but slow processes.
// Instead, a job is taken back once it has been active longer than the staleness bound and
// no process with a fresh heartbeat lists it (liveness.ts): its holder is dead, however long
// a live one may take. pg-boss's own `fail` puts it back, so its retry count and backoff
// apply as after any failure, and the queue's notification trigger (install.ts) wakes the
// workers when it falls due.
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type PgBoss from 'pg-boss';
import type { Database } from '../db/schema.js';
import { bossDatabase } from './boss-database.js';
import { JOBS_SCHEMA } from './install.js';
import type { RunningJobs } from './liveness.js';
import { QUEUES, type QueueName } from './queues.js';
import { type RepeatingTask, repeatEvery } from './repeating-task.js';

export const REAPED_MESSAGE = 'its worker stopped beating (process died)';

/** Rows of processes dead this long are deleted: nobody will ask about them any more. */
const FORGET_DEAD_AFTER = '1 hour';

interface Orphan {
  id: string;
  name: QueueName;
}

/**
 * Haven's active jobs that no live process holds. `own` (what this process runs) is never
 * taken back, even were its own beat late. Read through pg-boss's partial index of active
 * jobs (install.ts): the job table also keeps hours of finished jobs.
 */
function orphans(staleSeconds: number, own: string[], lock: boolean): RawBuilder<Orphan> {
  const stale = sql`now() - make_interval(secs => ${staleSeconds})`;
  return sql<Orphan>`
    select j.id, j.name from ${sql.table(`${JOBS_SCHEMA}.job`)} as j
    where j.name in (${sql.join(Object.values(QUEUES))})
      and j.state = 'active'
      and j.started_on < ${stale}
      and j.id <> all(${own}::uuid[])
      and not exists (select 1 from instance_heartbeats as h
        where h.beat_at > ${stale} and j.id = any(h.running_jobs))
    ${lock ? sql`for update of j skip locked` : sql``}`;
}

export function startReaper(options: {
  db: Kysely<Database>;
  boss: PgBoss;
  log: FastifyBaseLogger;
  staleSeconds: number;
  reapSeconds: number;
  jobs: RunningJobs;
}): RepeatingTask {
  const { db, boss, log, staleSeconds } = options;

  /** One statement when there is nothing to do (the idle case): the look, and forgetting. */
  async function look(): Promise<Orphan[]> {
    const own = options.jobs.held();
    const found = await sql<Orphan>`
      with forgotten as (
        delete from instance_heartbeats where beat_at < now() - ${FORGET_DEAD_AFTER}::interval)
      ${orphans(staleSeconds, own, false)}`.execute(db);
    return found.rows;
  }

  /**
   * Looks again with the rows locked, and fails them in the same transaction: two reapers
   * finding the same job hand it back once (the second skips it, then finds it no longer
   * active), never again after a worker has taken it up anew.
   */
  async function handBack(): Promise<Orphan[]> {
    return db.transaction().execute(async (trx) => {
      const locked = await orphans(staleSeconds, options.jobs.held(), true).execute(trx);
      for (const job of locked.rows) {
        await boss.fail(job.name, job.id, { message: REAPED_MESSAGE }, { db: bossDatabase(trx) });
      }
      return locked.rows;
    });
  }

  return repeatEvery(
    options.reapSeconds * 1000,
    async () => {
      if ((await look()).length === 0) {
        return;
      }
      const handed = await handBack();
      if (handed.length > 0) {
        log.warn({ jobs: handed }, 'jobs of a dead process handed back for a retry');
      }
    },
    (error) => log.warn({ err: error }, 'could not look for jobs of dead processes'),
  );
}
