// The job queue on the application database: pg-boss through our own Kysely pool, on
// PGlite and on PostgreSQL alike.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { eventually } from '../../test/tcp-proxy.js';
import { createJobQueue, type JobQueue } from './queue.js';
import { QUEUES } from './queues.js';

const log = pino({ level: 'silent' });

describe('job queue (pg-boss on the application database)', () => {
  let database: TestDatabase | undefined;
  let queues: JobQueue[] = [];

  afterEach(async () => {
    for (const queue of queues) {
      await queue.stop();
    }
    queues = [];
    await database?.drop();
    database = undefined;
  });

  async function queueWith(runWorkers: boolean, seen: unknown[]) {
    database ??= await createTestDatabase();
    // A long polling interval: only the wake-up after a send can make these tests pass fast.
    const queue = createJobQueue({
      db: database.handle.db,
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
});
