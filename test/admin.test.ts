// `npm run admin -- set-tier`, run as the real command on the storage a server would use.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { openStorage } from '../src/db/storage.js';
import { testConfig } from './app.js';
import { createOrg, newSession } from './identity.js';

const ROOT = new URL('..', import.meta.url).pathname;

function admin(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('npm run admin -- set-tier', () => {
  it('raises an org to pro (1000 rpm) and refuses bad input with one line', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'haven-admin-'));
    const env = { DATA_DIR: dataDir };
    try {
      // Make an org through the API, then stop the app so the command may own the storage.
      let storage = await openStorage({ databaseUrl: undefined, dataDir });
      let app = await buildApp(testConfig({ ...env, LOG_LEVEL: 'silent' }), {
        database: storage.database,
      });
      const owner = await newSession(app);
      const org = await createOrg(app, owner);
      await app.close();
      await storage.close();

      const raised = await admin(['set-tier', org.id, 'pro'], env);
      expect(raised.stderr).toBe('');
      expect(raised.code).toBe(0);
      expect(raised.stdout.trim()).toBe(`org ${org.id}: tier pro, rate_limit_rpm 1000`);

      const custom = await admin(['set-tier', org.id, 'enterprise', '5000'], env);
      expect(custom.code).toBe(0);

      for (const args of [
        ['set-tier', 'nope', 'pro'],
        ['set-tier', org.id, 'enterprise'],
        ['bogus'],
      ]) {
        const refused = await admin(args, env);
        expect(refused.code).toBe(1);
        expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      }

      storage = await openStorage({ databaseUrl: undefined, dataDir });
      app = await buildApp(testConfig({ ...env, LOG_LEVEL: 'silent' }), {
        database: storage.database,
      });
      const read = await app.inject({
        url: `/api/v1/developers/orgs/${org.id}`,
        headers: owner.auth,
      });
      expect(read.json()).toMatchObject({ tier: 'enterprise', rate_limit_rpm: 5000 });
      await app.close();
      await storage.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
