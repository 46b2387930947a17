// `npm run admin -- …`, run as the real command on the storage a server would use.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { openStorage } from '../src/db/storage.js';
import { buildTestApp, testConfig } from './app.js';
import { runCli } from './cli.js';
import { createTestDatabase, newDataDir } from './database.js';
import { createOrg, newSession } from './identity.js';
import { eventually } from './tcp-proxy.js';

function admin(args: string[], env: Record<string, string>) {
  return runCli('admin', args, env);
}

describe('npm run admin -- set-tier', () => {
  it('raises an org to pro (1000 rpm) and refuses bad input with one line', async () => {
    const dataDir = newDataDir('admin');
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
      // Each change is on the org's audit chain, by the operator (CONTRACT.md §12.1).
      const log = await app.inject({
        url: `/api/v1/developers/orgs/${org.id}/audit-log`,
        headers: owner.auth,
      });
      expect(
        log
          .json()
          .entries.map((entry: { action: string; actor: object; changes: object }) => [
            entry.action,
            entry.actor,
            entry.changes,
          ]),
      ).toEqual([
        [
          'org.tier_changed',
          { type: 'system', id: 'haven', label: 'operator' },
          { tier: 'enterprise', rate_limit_rpm: 5000 },
        ],
        [
          'org.tier_changed',
          { type: 'system', id: 'haven', label: 'operator' },
          { tier: 'pro', rate_limit_rpm: 1000 },
        ],
        ['org.created', { type: 'user', id: owner.userId, label: 'owner' }, expect.any(Object)],
      ]);
      await app.close();
      await storage.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

function trustListDocument(body: string) {
  return JSON.parse(JSON.parse(body).document) as {
    issue: { number: number };
    entries: Array<{ did: string; tier: string; status: string }>;
  };
}

describe('npm run admin -- set-advisor-tier / set-advisor-status', () => {
  it('change an entry and re-issue the trust list (embedded storage, server stopped)', async () => {
    const dataDir = newDataDir('admin');
    const env = { DATA_DIR: dataDir };
    const open = async () => {
      const storage = await openStorage({ databaseUrl: undefined, dataDir });
      const app = await buildApp(testConfig({ ...env, LOG_LEVEL: 'silent' }), {
        database: storage.database,
      });
      return { storage, app };
    };
    try {
      let { storage, app } = await open();
      const before = trustListDocument(
        (await app.inject({ url: '/.well-known/ocss/trust-list' })).body,
      );
      await app.close();
      await storage.close();

      const did = 'did:ocss:sandbox-unconfigured-provider';
      const suspended = await admin(['set-advisor-status', did, 'suspended'], env);
      expect(suspended.stderr).toBe('');
      expect(suspended.code).toBe(0);
      expect(suspended.stdout.trim()).toBe(
        `${did}: status suspended; trust list issue ${before.issue.number + 1}`,
      );
      for (const args of [
        ['set-advisor-status', did, 'gone'],
        ['set-advisor-tier', 'did:web:x', 'verified'],
        ['set-advisor-tier', 'did:ocss:nobody', 'verified'],
      ]) {
        const refused = await admin(args, env);
        expect(refused.code, args.join(' ')).toBe(1);
        expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      }

      ({ storage, app } = await open());
      const after = trustListDocument(
        (await app.inject({ url: '/.well-known/ocss/trust-list' })).body,
      );
      expect(after.issue.number).toBe(before.issue.number + 1);
      expect(after.entries.find((entry) => entry.did === did)).toMatchObject({
        status: 'suspended',
      });
      await app.close();
      await storage.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it.skipIf(!process.env.DATABASE_URL)(
    'reach a running server on the same PostgreSQL database within a second',
    async () => {
      const database = await createTestDatabase();
      const t = await buildTestApp({ database });
      try {
        const read = async () =>
          trustListDocument((await t.app.inject({ url: '/.well-known/ocss/trust-list' })).body);
        const before = await read();
        const did = 'did:ocss:sandbox-provider';
        const promoted = await admin(['set-advisor-status', did, 'revoked'], {
          DATABASE_URL: database.url ?? '',
        });
        expect(promoted.stderr).toBe('');
        expect(promoted.code).toBe(0);
        const seenAt = Date.now();
        await eventually(
          async () => (await read()).issue.number === before.issue.number + 1,
          'the server to serve the new issue',
        );
        expect(Date.now() - seenAt).toBeLessThan(2_000);
        expect((await read()).entries.find((entry) => entry.did === did)).toMatchObject({
          status: 'revoked',
        });
      } finally {
        await t.close();
      }
    },
    120_000,
  );
});
