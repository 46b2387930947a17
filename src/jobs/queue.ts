// Durable background work on the application database (pg-boss 10, on PostgreSQL and on
// embedded PGlite alike). A job is a row: it is written before the request that queued it is
// answered, so it survives a crash (kill -9) and is finished by whichever process runs
// workers next. Workers run inside the API process by default (WORKERS=inline) or only in
// `npm run worker` processes (WORKERS=off on the API).
//
// Idle workers do not poll: the transaction that queues a job notifies (LISTEN/NOTIFY, see
// install.ts), every process running workers hears it and wakes that queue's loops, or sets
// a timer for when a delayed job or a retry falls due. A long fallback poll remains for a
// message missed while the listening connection was down.
//
// Every process with a queue beats (liveness.ts), listing the jobs it runs; processes running
// workers also hand back the jobs of processes that stopped beating (reaper.ts), so a job
// held by a killed process is taken up again within a minute, and one held by a live but slow
// process never is.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import PgBoss from 'pg-boss';
import type { DatabaseNotifications } from '../db/notifications.js';
import type { Database } from '../db/schema.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { bossDatabase } from './boss-database.js';
import { JOBS_CHANNEL, JOBS_SCHEMA } from './install.js';
import { countWaitingJobs, runObserved, withTraceContext } from './job-telemetry.js';
import {
  createRunningJobs,
  type Heartbeat,
  LIVENESS,
  type LivenessTiming,
  newInstanceId,
  startHeartbeat,
} from './liveness.js';
import { QUEUE_CONCURRENCY, type QueueName } from './queues.js';
import { startReaper } from './reaper.js';
import type { RepeatingTask } from './repeating-task.js';

export interface JobContext {
  id: string;
  /** 0 on the first run; raised when pg-boss hands out a job again after a failure. */
  retryCount: number;
}

export type JobHandler<T> = (data: T, job: JobContext) => Promise<void>;

export interface SendOptions {
  /** Not before this many seconds from now. */
  startAfterSeconds?: number;
  /** Write the job inside this transaction: it exists exactly when the caller's rows do. */
  trx?: Transaction<Database>;
}

export interface JobQueueOptions {
  db: Kysely<Database>;
  log: FastifyBaseLogger;
  /** Whether this process runs the handlers (else it only queues). */
  runWorkers: boolean;
  /** Wakes workers when any process queues a job; without it, workers only poll. */
  notifications?: DatabaseNotifications;
  /**
   * How often an idle queue looks for due jobs without being woken (one loop per queue at
   * this interval, the others at ten times it): a safety net for a missed notification.
   */
  pollingIntervalSeconds?: number;
  /** Heartbeat and reaper periods (tests shorten them); LIVENESS otherwise. */
  liveness?: Partial<LivenessTiming>;
  /** Where runs are counted and traced, and the waiting jobs read from (job-telemetry.ts). */
  telemetry?: Telemetry;
}

/** With notifications, the fallback poll: 2 queues, one loop each at 30 s, is ~0.07 tx/s. */
const FALLBACK_POLL_SECONDS = 30;
/** Without notifications (none wired), pg-boss's own default. */
const POLL_SECONDS = 2;
/** Loops other than a queue's first poll this many times less often. */
const OTHER_LOOPS_SLOWER = 10;
/** Due-time timers are grouped to this granularity (a burst of retries: few timers). */
const DUE_GRANULARITY_MS = 100;

/** How often a stopping queue checks that pg-boss's last calls have settled. */
const SETTLE_CHECK_MS = 20;
const STOP_TIMEOUT_MS = 10_000;

export function createJobQueue(options: JobQueueOptions) {
  const { log, telemetry } = options;
  telemetry?.metrics.watchWaitingJobs(() => countWaitingJobs(options.db));
  const instanceId = newInstanceId();
  const liveness = { ...LIVENESS, ...options.liveness };
  const running = createRunningJobs();
  let heartbeat: Heartbeat | undefined;
  let reaper: RepeatingTask | undefined;
  // pg-boss's own statements and the handlers it runs, under way now. Its graceful stop waits
  // only for workers holding a job: one whose fetch is still in flight may get a job after
  // stop() resolves and run it, then complete it on a database being closed. stop() waits
  // for this count to reach zero as well; a fetch hands its job to the handler within the
  // same chain of promises, so the count never reads zero in between.
  let inFlight = 0;
  const tracked = <T>(work: Promise<T>): Promise<T> => {
    inFlight++;
    return work.finally(() => {
      inFlight--;
    });
  };
  const database = bossDatabase(options.db);
  const boss = new PgBoss({
    db: { executeSql: (text, values) => tracked(database.executeSql(text, values)) },
    schema: JOBS_SCHEMA,
    // The migration step installs the schema; starting only checks its version.
    migrate: false,
    supervise: options.runWorkers,
    // Maintenance (archiving, and expiring a job active past its queue's 15-minute backstop:
    // a live but hung handler; dead processes' jobs are the reaper's) is checked every 2
    // minutes, pg-boss's default: one transaction per check. State monitoring stays off.
    maintenanceIntervalSeconds: 120,
    schedule: false,
  });
  boss.on('error', (error) => log.error({ err: error }, 'job queue error'));
  const handlers = new Map<QueueName, JobHandler<never>>();
  const workers = new Map<QueueName, string[]>();
  const dueTimers = new Map<string, NodeJS.Timeout>();
  let started = false;
  let listening = false;

  function wake(queue: QueueName): void {
    for (const id of workers.get(queue) ?? []) {
      boss.notifyWorker(id);
    }
  }

  function wakeAll(): void {
    for (const queue of workers.keys()) {
      wake(queue);
    }
  }

  /** A notification `<queue> <ms until due>`: wake now, or when the job falls due. */
  function onJobMessage(payload: string): void {
    const [name, dueIn] = payload.split(' ');
    const queue = name as QueueName;
    if (!workers.has(queue)) {
      return;
    }
    const delayMs = Number(dueIn);
    if (!(delayMs > 0)) {
      wake(queue);
      return;
    }
    const dueAt = Math.ceil((Date.now() + delayMs) / DUE_GRANULARITY_MS) * DUE_GRANULARITY_MS;
    const key = `${queue} ${dueAt}`;
    if (!dueTimers.has(key)) {
      const timer = setTimeout(() => {
        dueTimers.delete(key);
        wake(queue);
      }, dueAt - Date.now());
      timer.unref();
      dueTimers.set(key, timer);
    }
  }

  async function runOne(queue: QueueName, job: PgBoss.JobWithMetadata<unknown>) {
    const handler = handlers.get(queue) as JobHandler<unknown>;
    // Listed by this process's beats from here on: while it beats, nobody takes the job back.
    running.started(job.id);
    try {
      await runObserved(telemetry, queue, job, (data) =>
        handler(data, { id: job.id, retryCount: job.retryCount }),
      );
    } catch (error) {
      // Thrown back to pg-boss, which retries the job on the queue's schedule.
      log.error({ err: error, queue, job_id: job.id }, 'job failed; it will be retried');
      throw error;
    } finally {
      running.ended(job.id);
    }
  }

  return {
    /**
     * This process's id in `instance_heartbeats`: what it claims can be told apart from what
     * a dead process left (liveness.ts, `isInstanceAliveSql`).
     */
    instanceId,
    /** After how many seconds without a beat an instance is dead (liveness.ts). */
    staleSeconds: liveness.staleSeconds,

    /** Registers the handler of a queue; it runs only if this process runs workers. */
    handle<T>(queue: QueueName, handler: JobHandler<T>): void {
      handlers.set(queue, handler as JobHandler<never>);
    },

    async start(): Promise<void> {
      if (started) {
        return;
      }
      await boss.start();
      started = true;
      heartbeat = await startHeartbeat({
        db: options.db,
        log,
        instanceId,
        beatSeconds: liveness.beatSeconds,
        jobs: running,
      });
      if (!options.runWorkers) {
        return;
      }
      reaper = startReaper({
        db: options.db,
        boss,
        log,
        staleSeconds: liveness.staleSeconds,
        reapSeconds: liveness.reapSeconds,
        jobs: running,
      });
      const poll =
        options.pollingIntervalSeconds ??
        (options.notifications ? FALLBACK_POLL_SECONDS : POLL_SECONDS);
      for (const queue of handlers.keys()) {
        const ids: string[] = [];
        // Several loops per queue: one slow job (a webhook endpoint taking its full 15 s)
        // must not hold up the others behind it.
        for (let i = 0; i < QUEUE_CONCURRENCY[queue]; i++) {
          let self = '';
          self = await boss.work<unknown>(
            queue,
            {
              batchSize: 1,
              includeMetadata: true,
              // One loop per queue is enough to find a job nobody was told of; having
              // found one, it wakes the next loop (below), so a backlog still fans out.
              pollingIntervalSeconds: i === 0 ? poll : poll * OTHER_LOOPS_SLOWER,
            },
            async ([job]) => {
              if (!job) {
                return;
              }
              // There may be more: the next loop looks too (it finds nothing and sleeps
              // again when there is not), so a burst is drained by all loops at once.
              boss.notifyWorker(ids[(i + 1) % ids.length] as string);
              try {
                await tracked(runOne(queue, job));
              } finally {
                // pg-boss's worker waits a polling interval between fetches unless woken; one
                // job per fetch would drain a backlog (a burst of edits, a restart) at one
                // job per interval. Having just found work, this loop looks again at once.
                boss.notifyWorker(self);
              }
            },
          );
          ids.push(self);
        }
        workers.set(queue, ids);
      }
      // After the loops exist, so a message arriving at once finds them. After an outage of
      // the listening connection, every loop looks once: messages may have been missed.
      if (!listening) {
        listening = true;
        await options.notifications?.listen(JOBS_CHANNEL, onJobMessage, wakeAll);
      }
    },

    /** Queues a job; resolves with its id once it is stored. */
    async send(queue: QueueName, data: object, sendOptions: SendOptions = {}): Promise<string> {
      // The trace it is queued in goes with it: its run continues that trace.
      const id = await boss.send(queue, withTraceContext(data, telemetry), {
        startAfter: sendOptions.startAfterSeconds,
        db: sendOptions.trx ? bossDatabase(sendOptions.trx) : undefined,
      });
      if (!id) {
        throw new Error(`pg-boss did not accept a job for ${queue}`);
      }
      if (!sendOptions.trx) {
        wake(queue);
      }
      return id;
    },

    /** Tells this process's worker of a queue to look now (call after committing a send). */
    wake,

    /** Stops taking jobs and waits (bounded) for the ones in hand. */
    async stop(): Promise<void> {
      if (!started) {
        return;
      }
      started = false;
      await reaper?.stop();
      reaper = undefined;
      workers.clear();
      for (const timer of dueTimers.values()) {
        clearTimeout(timer);
      }
      dueTimers.clear();
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      await boss.stop({ graceful: true, close: false, wait: true, timeout: STOP_TIMEOUT_MS });
      while (inFlight > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, SETTLE_CHECK_MS));
      }
      // Beating until the jobs in hand have ended, so no other process takes them meanwhile.
      await heartbeat?.stop();
      heartbeat = undefined;
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
