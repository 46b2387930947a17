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
  });

  it('runs a queued job in a worker of the same process, woken at once', async () => {
    database = await createTestDatabase();
    const seen: unknown[] = [];
    const queue = createJobQueue({
      db: database.handle.db,
      log,
      runWorkers: true,
      pollingIntervalSeconds: 30,
    });
    queues.push(queue);
    queue.handle<{ n: number }>(QUEUES.enforcement, async (data) => {
      seen.push(data);
    });
    await queue.start();
    await queue.send(QUEUES.enforcement, { n: 1 });
    await eventually(async () => seen.length === 1, 'the job to run');
    expect(seen).toEqual([{ n: 1 }]);
  });
});
