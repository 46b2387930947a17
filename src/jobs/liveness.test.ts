// Heartbeats and the reaper, in process, with shortened periods: a job that a live process is
// still running, long past the staleness bound, is never handed to another worker, while a
// job whose holder never beats (a process killed before its beat, or one that knows nothing
// of heartbeats) is handed back. Two job queues, as two instances: on PostgreSQL each with
// its own pool, on PGlite both on the one embedded database. Killed processes: see
// test/job-liveness.test.ts.
import { sql } from 'kysely';
import PgBoss from 'pg-boss';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { eventually } from '../../test/tcp-proxy.js';
import type { DatabaseHandle, Db } from '../db/connect.js';
import { bossDatabase } from './boss-database.js';
import { JOBS_SCHEMA } from './install.js';
import { isInstanceAliveSql, type LivenessTiming } from './liveness.js';
import { createJobQueue, type JobQueue } from './queue.js';
import { QUEUES } from './queues.js';
import { REAPED_MESSAGE } from './reaper.js';

const log = pino({ level: 'silent' });
/** Long enough that a beat is never late by a whole bound on a loaded 2-core machine. */
const TIMING: LivenessTiming = { beatSeconds: 0.25, staleSeconds: 3, reapSeconds: 0.25 };

interface JobRow {
  state: string;
  retry_count: number;
  output: { message?: string } | null;
  started_on: Date | null;
}

async function jobRow(db: Db, id: string): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>`
    select state, retry_count, output, started_on
    from ${sql.table(`${JOBS_SCHEMA}.job`)} where id = ${id}`.execute(db);
  return rows.rows[0];
}

async function isAlive(db: Db, instanceId: string, staleSeconds: number): Promise<boolean> {
  const rows = await sql<{ alive: boolean }>`
    select ${isInstanceAliveSql(instanceId, staleSeconds)} as alive`.execute(db);
  return rows.rows[0]?.alive === true;
}

describe('heartbeats and the reaper', () => {
  let database: TestDatabase | undefined;
  let otherHandle: DatabaseHandle | undefined;
  let queues: JobQueue[] = [];
  let bare: PgBoss | undefined;
  const releases: Array<() => void> = [];

  afterEach(async () => {
    for (const release of releases.splice(0)) {
      release();
    }
    for (const queue of queues) {
      await queue.stop();
    }
    queues = [];
    await bare?.stop({ graceful: false, close: false, wait: true });
    bare = undefined;
    await otherHandle?.close();
    otherHandle = undefined;
    await database?.drop();
    database = undefined;
  });

  /** An instance running enforcement jobs with `handler`; the second gets its own pool. */
  async function instance(handler: (jobId: string) => Promise<void>): Promise<JobQueue> {
    database ??= await createTestDatabase();
    let handle = database.handle;
    if (queues.length > 0 && database.reopen) {
      otherHandle = database.reopen();
      handle = otherHandle;
    }
    const queue = createJobQueue({
      db: handle.db,
      notifications: handle.notifications,
      log,
      runWorkers: true,
      pollingIntervalSeconds: 30,
      liveness: TIMING,
    });
    queue.handle(QUEUES.enforcement, (_data, job) => handler(job.id));
    queues.push(queue);
    await queue.start();
    return queue;
  }

  it('never hands a live, slow job to another worker; hands back one whose holder never beats', async () => {
    const runs: Array<{ by: string; id: string }> = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    releases.push(release);
    const slow = await instance(async (id) => {
      runs.push({ by: 'slow', id });
      await held;
    });
    const db = (database as TestDatabase).handle.db;
    const slowJob = await slow.send(QUEUES.enforcement, { n: 1 });
    await eventually(async () => runs.length === 1, 'the slow instance to take the job');
    // Another instance with workers for the same queue: it would take the job if it were
    // handed back.
    await instance(async (id) => {
      runs.push({ by: 'other', id });
    });

    // Held by a holder that never beats: pg-boss itself, outside any Haven instance. Queued on
    // the other queue, which no instance here runs, so nothing but the reaper touches it.
    bare = new PgBoss({
      db: bossDatabase(db),
      schema: JOBS_SCHEMA,
      migrate: false,
      supervise: false,
      schedule: false,
    });
    await bare.start();
    await bare.send(QUEUES.webhookDelivery, { n: 2 });
    const [orphan] = await bare.fetch(QUEUES.webhookDelivery);
    expect(orphan).toBeDefined();
    const orphanId = (orphan as PgBoss.Job).id;

    // Handed back once the bound has passed with no beat listing it.
    await eventually(
      async () => (await jobRow(db, orphanId))?.state === 'retry',
      'the job with no live holder to be handed back',
      (TIMING.staleSeconds + 10) * 1000,
    );
    expect((await jobRow(db, orphanId))?.output).toEqual({ message: REAPED_MESSAGE });

    // The slow job started before the orphan, so it too had been active past the bound when
    // the reaper handed the orphan back: its live holder's beats kept it.
    const slowRow = await jobRow(db, slowJob);
    const orphanRow = await jobRow(db, orphanId);
    expect(slowRow?.started_on?.getTime()).toBeLessThan(orphanRow?.started_on?.getTime() ?? 0);
    expect(slowRow).toMatchObject({ state: 'active', retry_count: 0 });
    expect(runs).toEqual([{ by: 'slow', id: slowJob }]);
    expect(await isAlive(db, slow.instanceId, TIMING.staleSeconds)).toBe(true);

    release();
    await eventually(
      async () => (await jobRow(db, slowJob))?.state === 'completed',
      'the slow job to complete',
    );
    expect(runs).toEqual([{ by: 'slow', id: slowJob }]);
  });

  it('lists the jobs an instance runs in its beats, and deletes its row on a clean stop', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    releases.push(release);
    let started = false;
    const queue = await instance(async () => {
      started = true;
      await held;
    });
    const db = (database as TestDatabase).handle.db;
    const jobId = await queue.send(QUEUES.enforcement, { n: 3 });
    await eventually(async () => started, 'the job to start');
    const listed = async () => {
      const rows = await db
        .selectFrom('instance_heartbeats')
        .select('running_jobs')
        .where('instance_id', '=', queue.instanceId)
        .execute();
      return rows[0]?.running_jobs ?? [];
    };
    await eventually(async () => (await listed()).includes(jobId), 'a beat to list the job');
    expect(await isAlive(db, queue.instanceId, TIMING.staleSeconds)).toBe(true);

    release();
    await queue.stop();
    expect(await listed()).toEqual([]);
    expect(await isAlive(db, queue.instanceId, TIMING.staleSeconds)).toBe(false);
    expect(await jobRow(db, jobId)).toMatchObject({ state: 'completed' });
  });
});
