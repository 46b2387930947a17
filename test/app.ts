// buildTestApp(): the real app on its own clean database, with a hand-moved clock and the
// log lines kept in memory for assertions.
import { type AddressInfo, createServer } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { type AppDeps, buildApp } from '../src/app.js';
import { type Config, loadConfig } from '../src/config.js';
import { TestClock } from './clock.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  clock: TestClock;
  database: TestDatabase;
  /** Every log line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>;
  /** The raw text of every log line (for secret scans). */
  rawLogs: string[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: TestClock;
  plugins?: AppDeps['plugins'];
  /** Service knobs (job polling, webhook retry delays, …). */
  tuning?: AppDeps['tuning'];
  /** Reuse a database (e.g. to show that state survives a restart). */
  database?: TestDatabase;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    APP_ENV: 'sandbox',
    DATA_DIR: 'memory',
    LOG_LEVEL: 'info',
    PUBLIC_BASE_URL: 'http://haven.test',
    ...env,
  });
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options.env);
  const clock = options.clock ?? new TestClock();
  const database = options.database ?? (await createTestDatabase());
  const rawLogs: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        rawLogs.push(line);
        logs.push(JSON.parse(line));
      }
      done();
    },
  });
  const app = await buildApp(config, {
    database: database.handle,
    clock,
    logStream,
    plugins: options.plugins,
    tuning: options.tuning,
  });
  await app.ready();
  return {
    app,
    config,
    clock,
    database,
    logs,
    rawLogs,
    close: async () => {
      await app.close();
      if (!options.database) {
        await database.drop();
      }
    },
  };
}

/** A port nobody listens on right now (the OS picks it; released before it is returned). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The app listening on 127.0.0.1 with PUBLIC_BASE_URL set to where it listens, so that links
 * it hands out (OAuth connect config, docs) can be followed by a real client.
 */
export async function buildListeningTestApp(
  options: TestAppOptions = {},
): Promise<TestApp & { baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await buildTestApp({ ...options, env: { ...options.env, PUBLIC_BASE_URL: baseUrl } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { ...t, baseUrl };
}
