// Jobs survive the process (docs/decisions.md "A job exists exactly when its rows do"): an
// enforcement queued by a server that is then killed with SIGKILL is finished after the
// restart, on embedded storage (the same DATA_DIR) and on PostgreSQL (there by a separate `npm
// run worker` process, the API running WORKERS=off).
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, newDataDir } from './database.js';
import { killHard, runScript, sandboxCaller, startServer, waitForLine } from './server-process.js';
import { eventually } from './tcp-proxy.js';

const PROCESS_TIMEOUT_MS = 180_000;
const call = sandboxCaller('job-durability');

/** Quick setup, one platform connected, one enforcement queued: the job's id. */
async function queueEnforcement(url: string): Promise<string> {
  const setup = await call(url, 'POST', '/api/v1/setup/quick', {
    child_name: 'Kit',
    birth_date: '2015-03-01',
  });
  expect(setup.status).toBe(201);
  const family = setup.body.family as { id: string };
  const child = setup.body.child as { id: string };
  const connection = await call(url, 'POST', `/api/v1/families/${family.id}/connections`, {
    platform_id: 'nextdns',
  });
  expect(connection.status).toBe(201);
  const job = await call(url, 'POST', `/api/v1/children/${child.id}/enforce`, {});
  expect(job.status).toBe(202);
  expect(job.body.status).toBe('pending');
  return job.body.id as string;
}

async function jobStatus(url: string, jobId: string) {
  const job = await call(url, 'GET', `/api/v1/enforcement/jobs/${jobId}`);
  expect(job.status).toBe(200);
  return job.body;
}

describe('jobs across a kill -9', () => {
  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'embedded storage: a job queued before SIGKILL is finished by the restarted server',
    async () => {
      const dataDir = newDataDir('jobs');
      try {
        // The first server only queues, so the job is certainly still waiting when it dies.
        const first = await startServer({ DATA_DIR: dataDir, WORKERS: 'off' });
        const jobId = await queueEnforcement(first.url);
        await killHard(first);

        const second = await startServer({ DATA_DIR: dataDir });
        try {
          let job: Record<string, unknown> = {};
          await eventually(async () => {
            job = await jobStatus(second.url, jobId);
            return job.status === 'completed';
          }, 'the queued job to complete after the restart');
          expect(job.results).toEqual([
            expect.objectContaining({ platform_id: 'nextdns', status: 'success' }),
          ]);
        } finally {
          await killHard(second);
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it.runIf(Boolean(process.env.DATABASE_URL))(
    'PostgreSQL: a job queued by a killed API is run by a separate npm run worker process',
    async () => {
      const database = await createTestDatabase();
      const url = database.url as string;
      try {
        const api = await startServer({ DATABASE_URL: url, WORKERS: 'off' });
        const jobId = await queueEnforcement(api.url);
        await killHard(api);

        const reader = await startServer({ DATABASE_URL: url, WORKERS: 'off' });
        const worker = runScript('worker', { DATABASE_URL: url, LOG_LEVEL: 'info' });
        try {
          await waitForLine(worker, /Haven worker running/);
          let job: Record<string, unknown> = {};
          await eventually(async () => {
            job = await jobStatus(reader.url, jobId);
            return job.status === 'completed';
          }, 'the worker process to complete the job');
          expect(job.results).toEqual([
            expect.objectContaining({ platform_id: 'nextdns', status: 'success' }),
          ]);
          worker.child.kill('SIGTERM');
          expect(await worker.exited).toBe(0);
        } finally {
          await killHard(reader);
          worker.child.kill('SIGKILL');
        }
      } finally {
        await database.drop();
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
