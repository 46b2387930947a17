// buildTestApp(): the real app on its own clean database, with a hand-moved clock and the
// log lines kept in memory for assertions.
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
