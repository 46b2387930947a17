// Durable background work on the application database (pg-boss 10, on PostgreSQL and on
// embedded PGlite alike). A job is a row: it is written before the request that queued it is
// answered, so it survives a crash (kill -9) and is finished by whichever process runs
// workers next. Workers run inside the API process by default (WORKERS=inline) or only in
// `npm run worker` processes (WORKERS=off on the API).
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database } from '../db/schema.js';
import { bossDatabase } from './boss-database.js';
import { JOBS_SCHEMA } from './install.js';
import { QUEUE_CONCURRENCY, type QueueName } from './queues.js';

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
  /** How often an idle worker looks for due jobs (jobs queued here wake it at once). */
  pollingIntervalSeconds?: number;
}

export function createJobQueue(options: JobQueueOptions) {
  const { log } = options;
  const boss = new PgBoss({
    db: bossDatabase(options.db),
    schema: JOBS_SCHEMA,
    // The migration step installs the schema; starting only checks its version.
    migrate: false,
    supervise: options.runWorkers,
    schedule: false,
  });
  boss.on('error', (error) => log.error({ err: error }, 'job queue error'));
  const handlers = new Map<QueueName, JobHandler<never>>();
  const workers = new Map<QueueName, string[]>();
  let started = false;

  function wake(queue: QueueName): void {
    for (const id of workers.get(queue) ?? []) {
      boss.notifyWorker(id);
    }
  }

  async function runOne(queue: QueueName, job: PgBoss.JobWithMetadata<unknown>) {
    const handler = handlers.get(queue) as JobHandler<unknown>;
    try {
      await handler(job.data, { id: job.id, retryCount: job.retryCount });
    } catch (error) {
      // Thrown back to pg-boss, which retries the job on the queue's schedule.
      log.error({ err: error, queue, job_id: job.id }, 'job failed; it will be retried');
      throw error;
    }
  }

  return {
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
      if (!options.runWorkers) {
        return;
      }
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
              pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
            },
            async ([job]) => {
              if (!job) {
                return;
              }
              try {
                await runOne(queue, job);
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
    },

    /** Queues a job; resolves with its id once it is stored. */
    async send(queue: QueueName, data: object, sendOptions: SendOptions = {}): Promise<string> {
      const id = await boss.send(queue, data, {
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
      workers.clear();
      await boss.stop({ graceful: true, close: false, wait: true, timeout: 10_000 });
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
