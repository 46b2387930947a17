// The job queue on the application database: pg-boss through our own Kysely pool, on
// PGlite and on PostgreSQL alike.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { eventually } from '../../test/tcp-proxy.js';
import type { DatabaseHandle } from '../db/connect.js';
import { createJobQueue, type JobQueue } from './queue.js';
import { QUEUES } from './queues.js';

const log = pino({ level: 'silent' });

describe('job queue (pg-boss on the application database)', () => {
  let database: TestDatabase | undefined;
  let queues: JobQueue[] = [];
  let otherHandle: DatabaseHandle | undefined;

  afterEach(async () => {
    for (const queue of queues) {
      await queue.stop();
    }
    queues = [];
    await otherHandle?.close();
    otherHandle = undefined;
    await database?.drop();
    database = undefined;
  });

  async function queueWith(runWorkers: boolean, seen: unknown[]) {
    database ??= await createTestDatabase();
    // A long polling interval: only the wake-up after a send can make these tests pass fast.
    const queue = createJobQueue({
      db: database.handle.db,
      notifications: database.handle.notifications,
      log,
      runWorkers,
      pollingIntervalSeconds: 30,
    });
    queues.push(queue);
    queue.handle<{ n: number }>(QUEUES.enforcement, async (data) => {
      seen.push(data);
    });
    await queue.start();
    return queue;
  }

  it('runs a queued job in a worker of the same process, woken at once', async () => {
    const seen: unknown[] = [];
    const queue = await queueWith(true, seen);
    await queue.send(QUEUES.enforcement, { n: 1 });
    await eventually(async () => seen.length === 1, 'the job to run');
    expect(seen).toEqual([{ n: 1 }]);
  });

  it('writes a job inside the caller’s transaction: rolled back, it never existed', async () => {
    const seen: unknown[] = [];
    const queue = await queueWith(true, seen);
    const db = (database as TestDatabase).handle.db;
    await expect(
      db.transaction().execute(async (trx) => {
        await queue.send(QUEUES.enforcement, { n: 'rolled back' }, { trx });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await db.transaction().execute(async (trx) => {
      await queue.send(QUEUES.enforcement, { n: 2 }, { trx });
    });
    queue.wake(QUEUES.enforcement);
    await eventually(async () => seen.length === 1, 'the committed job to run');
    expect(seen).toEqual([{ n: 2 }]);
  });

  it('keeps a job queued by a process without workers for the next one that has them', async () => {
    const seen: unknown[] = [];
    const producer = await queueWith(false, seen);
    await producer.send(QUEUES.enforcement, { n: 3 });
    await producer.stop();
    expect(seen).toEqual([]);
    const consumer = await queueWith(true, seen);
    // Started after the send: it finds the job on its first fetch.
    consumer.wake(QUEUES.enforcement);
    await eventually(async () => seen.length === 1, 'the waiting job to run');
    expect(seen).toEqual([{ n: 3 }]);
  });

  /**
   * Another instance: on PostgreSQL its own pool (another process would have one), on PGlite
   * another queue on the one embedded database. Either way it has no workers to wake and
   * no notifications of its own: only the database can tell the consumer.
   */
  async function otherInstance(): Promise<JobQueue> {
    const shared = database as TestDatabase;
    otherHandle = shared.reopen?.();
    const producer = createJobQueue({
      db: (otherHandle ?? shared.handle).db,
      log,
      runWorkers: false,
    });
    queues.push(producer);
    await producer.start();
    return producer;
  }

  it('runs a job queued by another instance within a second, woken by the database', async () => {
    const seen: unknown[] = [];
    // Polling every 30 s: only the notification sent with the job can wake this worker.
    await queueWith(true, seen);
    const producer = await otherInstance();
    await producer.send(QUEUES.enforcement, { n: 4 });
    await eventually(async () => seen.length === 1, 'the job to run within a second', 1_000);
    expect(seen).toEqual([{ n: 4 }]);
  });

  it('runs a delayed job when it falls due, without waiting for the next poll', async () => {
    const seen: unknown[] = [];
    await queueWith(true, seen);
    const producer = await otherInstance();
    await producer.send(QUEUES.enforcement, { n: 5 }, { startAfterSeconds: 1 });
    // Well within the 30 s poll: the worker set a timer for the due time it was told.
    await eventually(async () => seen.length === 1, 'the delayed job to run');
    expect(seen).toEqual([{ n: 5 }]);
  });
});
