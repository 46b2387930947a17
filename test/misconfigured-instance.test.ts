// An instance that cannot do the shared queues' work must not start: every API process and
// worker takes webhook deliveries and enforcement jobs off the same queues, and both need
// CREDENTIALS_KEY (to sign a delivery, to open a partner's credentials). docs/decisions.md
// "Production refuses to start without the secrets its work needs".
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from './database.js';
import { productionEnv } from './production.js';
import { runScript, startServer } from './server-process.js';

const PROCESS_TIMEOUT_MS = 120_000;
const REFUSAL = 'CREDENTIALS_KEY: is required when APP_ENV=production';
/** Each process names itself before its one line. */
const PREFIX: Record<string, string> = { main: 'haven', worker: 'haven worker' };

/** Production settings less CREDENTIALS_KEY. */
function withoutCredentialsKey(): Record<string, string> {
  const { CREDENTIALS_KEY: _dropped, ...rest } = productionEnv();
  return rest;
}

describe('an instance started without CREDENTIALS_KEY in production', () => {
  it(
    'refuses to start, as the API and as a worker, with one line naming the variable',
    async () => {
      for (const script of ['main', 'worker']) {
        const refused = runScript(script, { ...withoutCredentialsKey(), DATA_DIR: 'memory' });
        expect(await refused.exited, script).toBe(1);
        expect(refused.output.stderr.trim(), script).toBe(`${PREFIX[script]}: ${REFUSAL}`);
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it.runIf(process.env.DATABASE_URL)(
    'PostgreSQL: beside a configured instance on one database, it stops before taking any work',
    async () => {
      const database = await createTestDatabase();
      const url = database.url as string;
      const configured = await startServer({
        ...productionEnv(),
        DATABASE_URL: url,
        WORKERS: 'inline',
      });
      try {
        for (const script of ['main', 'worker']) {
          const misconfigured = runScript(script, {
            ...withoutCredentialsKey(),
            DATABASE_URL: url,
            PORT: '0',
          });
          expect(await misconfigured.exited, script).toBe(1);
          expect(misconfigured.output.stderr.trim(), script).toBe(`${PREFIX[script]}: ${REFUSAL}`);
          expect(misconfigured.output.stdout, script).toBe('');
        }
        // It stopped before opening the database or a queue; the configured one goes on.
        expect((await fetch(`${configured.url}/health`)).status).toBe(200);
      } finally {
        configured.child.kill('SIGKILL');
        await configured.exited;
        await database.drop();
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
