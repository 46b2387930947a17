// `npm run annex-b -- freeze|list`, run as the real command on the storage a server would use:
// a DATA_DIR of its own, and PostgreSQL beside a running server when DATABASE_URL is set.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildTestApp, testConfig } from '../../../test/app.js';
import { runCli } from '../../../test/cli.js';
import { newDataDir } from '../../../test/database.js';
import { buildApp } from '../../app.js';
import { openStorage } from '../../db/storage.js';

// Each case starts real processes (tsx, an embedded database on disk): slow on a loaded CI box.
const PROCESS_TIMEOUT_MS = 120_000;
const FROZE = /^froze Annex B edition (\d+) \(sha256:([0-9a-f]{64})\)$/;

function annexB(args: string[], env: Record<string, string>) {
  return runCli('annex-b', args, env);
}

function frozenLine(stdout: string): { edition: number; sha256: string } {
  const match = FROZE.exec(stdout.trim());
  if (!match?.[1] || !match[2]) {
    throw new Error(`not a freeze line: ${JSON.stringify(stdout)}`);
  }
  return { edition: Number(match[1]), sha256: match[2] };
}

describe('npm run annex-b', () => {
  it(
    'answers an unknown command with the usage line and exit code 2',
    async () => {
      const dataDir = newDataDir('annex-b-usage');
      try {
        for (const args of [['bogus'], [], ['toString'], ['freeze', 'now']]) {
          const refused = await annexB(args, { DATA_DIR: dataDir });
          expect(refused.code, args.join(' ')).toBe(2);
          expect(refused.stdout).toBe('');
          expect(refused.stderr).toBe('haven annex-b: usage: npm run annex-b -- freeze|list\n');
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'freezes and lists on a DATA_DIR, and stays off it while a server holds it',
    async () => {
      const dataDir = newDataDir('annex-b');
      const env = { DATA_DIR: dataDir };
      try {
        const empty = await annexB(['list'], env);
        expect(empty.stderr).toBe('');
        expect(empty.code).toBe(0);
        expect(empty.stdout).toBe('no Annex B edition frozen yet\n');

        const first = await annexB(['freeze'], env);
        expect(first.stderr).toBe('');
        expect(first.code).toBe(0);
        const one = frozenLine(first.stdout);
        expect(one.edition).toBe(1);
        const second = await annexB(['freeze'], env);
        expect(second.code).toBe(0);
        expect(frozenLine(second.stdout).edition).toBe(2);

        const listed = await annexB(['list'], env);
        expect(listed.code).toBe(0);
        const lines = listed.stdout.trim().split('\n');
        expect(lines).toHaveLength(2);
        expect(lines[0]).toMatch(
          new RegExp(`^edition 1  frozen_at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  sha256:${one.sha256}$`),
        );
        expect(lines[1]).toMatch(/^edition 2 /);

        // A server on the directory: it serves what the command froze, and owns the lock.
        const storage = await openStorage({ databaseUrl: undefined, dataDir });
        const app = await buildApp(testConfig({ ...env, LOG_LEVEL: 'silent' }), {
          database: storage.database,
        });
        try {
          const res = await app.inject({ url: '/api/v1/annex-b/editions/1' });
          expect(res.statusCode).toBe(200);
          expect(res.headers.etag).toBe(`"sha256:${one.sha256}"`);
          expect(JSON.parse(res.body).rules).toHaveLength(123);

          const refused = await annexB(['freeze'], env);
          expect(refused.code).not.toBe(0);
          expect(refused.stdout).toBe('');
          const refusal = refused.stderr.trim();
          expect(refusal.split('\n')).toHaveLength(1);
          expect(refusal).toMatch(/in use by process \d+; stop the server first$/);
          expect((await app.inject({ url: '/api/v1/annex-b/editions/3' })).statusCode).toBe(404);
        } finally {
          await app.close();
          await storage.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it.runIf(process.env.DATABASE_URL)(
    'freezes on PostgreSQL beside a running server, which serves it without a restart',
    async () => {
      const t = await buildTestApp();
      try {
        const env = { DATABASE_URL: t.database.url ?? '' };
        const get = (n: number) => t.app.inject({ url: `/api/v1/annex-b/editions/${n}` });
        expect((await get(1)).statusCode).toBe(404);

        const first = await annexB(['freeze'], env);
        expect(first.stderr).toBe('');
        expect(first.code).toBe(0);
        const one = frozenLine(first.stdout);
        expect(one.edition).toBe(1);
        const served = await get(1);
        expect(served.statusCode).toBe(200);
        expect(served.headers.etag).toBe(`"sha256:${one.sha256}"`);

        // Two operators at once: two processes, two connections, no shared number.
        const racing = await Promise.all([annexB(['freeze'], env), annexB(['freeze'], env)]);
        expect(racing.map((r) => r.code)).toEqual([0, 0]);
        const numbers = racing.map((r) => frozenLine(r.stdout).edition).sort((a, b) => a - b);
        expect(numbers).toEqual([2, 3]);
        expect((await get(3)).statusCode).toBe(200);
        expect((await get(1)).body).toBe(served.body);
      } finally {
        await t.close();
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
