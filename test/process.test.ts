// The real process, as `npm start` runs it: start, serve, refuse a second owner of the
// embedded data directory, stop cleanly on SIGTERM.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newDataDir } from './database.js';
import { runScript as run, waitForLine } from './server-process.js';

// Each case starts real processes (tsx, an embedded database on disk): slow on a loaded CI box.
const PROCESS_TIMEOUT_MS = 120_000;

describe('the server process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'haven-proc-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it(
    'refuses a bad variable with one line naming it',
    async () => {
      const { output, exited } = run('main', { APP_ENV: 'staging' });
      expect(await exited).toBe(1);
      expect(output.stderr.trim()).toBe(
        'haven: APP_ENV: must be "sandbox" or "production", got "staging"',
      );
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'serves on embedded storage, keeps others off its data, and stops cleanly on SIGTERM',
    async () => {
      const server = run('main', { PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      try {
        const [, url] = await waitForLine(server, /Haven listening on (http:\/\/127\.0\.0\.1:\d+)/);
        const health = await fetch(`${url}/health`);
        expect(health.status).toBe(200);
        expect(await health.json()).toMatchObject({ status: 'ok' });
        expect(existsSync(join(dataDir, 'haven.lock'))).toBe(true);

        const migrate = run('cli/migrate', { DATA_DIR: dataDir });
        expect(await migrate.exited).not.toBe(0);
        const refusal = migrate.output.stderr.trim();
        expect(refusal.split('\n')).toHaveLength(1);
        expect(refusal).toMatch(/in use by process \d+; stop the server first$/);

        // `npm run token` asks the running server (which owns the data directory).
        const token = run('cli/token', { DATA_DIR: dataDir, PUBLIC_BASE_URL: url ?? '' });
        expect(await token.exited).toBe(0);
        const jwt = token.output.stdout.trim();
        expect(jwt.split('.')).toHaveLength(3);
        const me = await fetch(`${url}/api/v1/auth/me`, {
          headers: { authorization: `Bearer ${jwt}` },
        });
        expect(me.status).toBe(200);

        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
        expect(server.output.stdout).toContain('"msg":"stopped"');
        expect(existsSync(join(dataDir, 'haven.lock'))).toBe(false);
      } finally {
        server.child.kill('SIGKILL');
      }

      // With the server gone, the operator commands own the directory.
      const migrate = run('cli/migrate', { DATA_DIR: dataDir });
      expect(await migrate.exited).toBe(0);
      expect(migrate.output.stdout).toMatch(/migrations up to date/);
      const offline = run('cli/token', { DATA_DIR: dataDir, PORT: '9' });
      expect(await offline.exited).toBe(0);
      expect(offline.output.stdout.trim().split('.')).toHaveLength(3);
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'takes over the lock after the server was killed with SIGKILL',
    async () => {
      const dir = newDataDir('kill');
      try {
        const first = run('main', { PORT: '0', DATA_DIR: dir });
        await waitForLine(first, /Haven listening on/);
        first.child.kill('SIGKILL');
        await first.exited;
        expect(existsSync(join(dir, 'haven.lock'))).toBe(true);
        const migrate = run('cli/migrate', { DATA_DIR: dir });
        expect(await migrate.exited).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
