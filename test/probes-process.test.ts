// The probes of real processes (CONTRACT.md §13), as `npm start` and `npm run worker` run:
// - SIGTERM with SHUTDOWN_DELAY_SECONDS: /health/ready turns 503 at once while requests are
//   still served for the delay, then the drain, then exit 0; a second signal during the delay
//   drains at once; SIGINT (a terminal's Ctrl-C) skips the delay;
// - the worker answers /metrics and the probes on WORKER_PORT (0: a free port, named in its
//   "Haven worker running on …" line), by the API's rules for /metrics.
// On embedded storage (a DATA_DIR on disk) and, when DATABASE_URL is set, on PostgreSQL (with
// Redis when REDIS_URL is set, which the readiness then checks).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, newDataDir, type TestDatabase } from './database.js';
import { productionEnv } from './production.js';
import {
  type RunningScript,
  sandboxCaller,
  startServer,
  startWorker,
  waitForLine,
} from './server-process.js';
import { eventually } from './tcp-proxy.js';

/** The runner's bound, for a hang only: each wait below has a deadline of its own. */
const PROCESS_TIMEOUT_MS = 120_000;

const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
const postgres = Boolean(databaseUrl);

interface Probe {
  status: number;
  body: { status: string; checks?: Record<string, unknown> };
}

async function probe(url: string): Promise<Probe> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: (await response.json()) as Probe['body'] };
}

/** Resolves with the exit code, or fails once `timeoutMs` passes without an exit. */
async function exitWithin(running: RunningScript, timeoutMs: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no exit within ${timeoutMs} ms; output:\n${running.output.stdout}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([running.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The messages of the process's log lines, in order. */
function messages(running: RunningScript): string[] {
  return running.output.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));
}

describe(`probes of real processes (${postgres ? 'PostgreSQL' : 'embedded storage'})`, () => {
  let database: TestDatabase | undefined;
  const dataDirs: string[] = [];
  const running: RunningScript[] = [];
  const redisCheck = postgres && redisUrl ? 'ok' : 'not_configured';

  /** Where a process keeps its data: a database of this file's, or a new data directory. */
  function storageEnv(): Record<string, string> {
    if (database) {
      return { DATABASE_URL: database.url as string, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) };
    }
    const dir = newDataDir('probes');
    dataDirs.push(dir);
    return { DATA_DIR: dir };
  }

  beforeAll(async () => {
    if (postgres) {
      database = await createTestDatabase();
    }
  });

  afterAll(async () => {
    for (const process of running) {
      process.child.kill('SIGKILL');
      await process.exited;
    }
    await database?.drop();
    for (const dir of dataDirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    'on SIGTERM with SHUTDOWN_DELAY_SECONDS=2: not ready at once, requests still served for the delay, then drained, exit 0',
    async () => {
      const server = await startServer({ ...storageEnv(), SHUTDOWN_DELAY_SECONDS: '2' });
      running.push(server);
      const call = sandboxCaller('shutdown-delay');
      expect(await probe(`${server.url}/health/ready`)).toEqual({
        status: 200,
        body: { status: 'ok', checks: { database: 'ok', redis: redisCheck, draining: false } },
      });

      const signalledAt = Date.now();
      server.child.kill('SIGTERM');
      let notReady: Probe | undefined;
      await eventually(async () => {
        notReady = await probe(`${server.url}/health/ready`);
        return notReady.status === 503;
      }, '/health/ready to turn 503');
      expect(notReady?.body).toMatchObject({
        status: 'unavailable',
        code: 503,
        checks: { database: 'ok', redis: redisCheck, draining: true },
      });
      // The same window: a product write is still carried out, liveness still 200.
      const write = await call(server.url, 'POST', '/api/v1/families', { name: 'In the delay' });
      expect(write.status, JSON.stringify(write.body)).toBe(201);
      expect((await probe(`${server.url}/health/live`)).status).toBe(200);
      expect((await probe(`${server.url}/health`)).body.status).toBe('draining');

      expect(await exitWithin(server, 30_000)).toBe(0);
      expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(2_000);
      const said = messages(server);
      const delayLine = said.indexOf(
        'shutting down: not ready, still serving for the shutdown delay',
      );
      const drainLine = said.indexOf('shutting down: finishing in-flight requests');
      expect(delayLine).toBeGreaterThanOrEqual(0);
      expect(drainLine).toBeGreaterThan(delayLine);
      expect(said.at(-1)).toBe('stopped');
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'a second SIGTERM during the delay drains at once; SIGINT skips the delay',
    async () => {
      const delay = { SHUTDOWN_DELAY_SECONDS: '600' };
      const twice = await startServer({ ...storageEnv(), ...delay });
      running.push(twice);
      twice.child.kill('SIGTERM');
      await eventually(
        async () => (await probe(`${twice.url}/health/ready`)).status === 503,
        '/health/ready to turn 503',
      );
      twice.child.kill('SIGTERM');
      expect(await exitWithin(twice, 30_000)).toBe(0);
      expect(messages(twice).at(-1)).toBe('stopped');

      const interrupted = await startServer({ ...storageEnv(), ...delay });
      running.push(interrupted);
      interrupted.child.kill('SIGINT');
      expect(await exitWithin(interrupted, 30_000)).toBe(0);
      const said = messages(interrupted);
      expect(said).toContain('shutting down: finishing in-flight requests');
      expect(said).not.toContain('shutting down: not ready, still serving for the shutdown delay');
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'the worker answers /metrics and the probes on WORKER_PORT=0 (named in its running line), /metrics by the API rules',
    async () => {
      const storage = storageEnv();
      // Production without METRICS_TOKEN: the probes answer, /metrics is not there.
      const production = await startWorker({ ...storage, ...productionEnv() });
      running.push(production);
      expect(production.url).not.toMatch(/:8081$/);
      expect(await probe(`${production.url}/health/live`)).toEqual({
        status: 200,
        body: { status: 'ok' },
      });
      expect(await probe(`${production.url}/health/ready`)).toEqual({
        status: 200,
        body: { status: 'ok', checks: { database: 'ok', redis: redisCheck, draining: false } },
      });
      expect(await probe(`${production.url}/metrics`)).toEqual({
        status: 404,
        body: { error: 'Not Found', message: 'route not found', code: 404 },
      });
      production.child.kill('SIGTERM');
      expect(await exitWithin(production, 30_000)).toBe(0);
      expect(messages(production)).toContain('worker shutting down: finishing jobs in hand');

      // With METRICS_TOKEN: 401 without it, the exposition with it.
      const token = 'worker-metrics-token';
      const worker = await startWorker({ ...storage, METRICS_TOKEN: token });
      running.push(worker);
      const refused = await fetch(`${worker.url}/metrics`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 401 });
      const scraped = await fetch(`${worker.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(scraped.status).toBe(200);
      expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const exposition = await scraped.text();
      for (const name of ['haven_jobs_total', 'haven_webhook_deliveries_total']) {
        expect(exposition).toContain(`# TYPE ${name} counter`);
      }
      expect(exposition).toMatch(/^process_cpu_seconds_total \d/m);
      worker.child.kill('SIGTERM');
      expect(await exitWithin(worker, 30_000)).toBe(0);
      // The listener is closed with the process.
      await waitForLine(worker, /worker shutting down/);
      await expect(fetch(`${worker.url}/health/live`)).rejects.toThrow();
    },
    PROCESS_TIMEOUT_MS,
  );
});
