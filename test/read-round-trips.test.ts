// docs/decisions.md "One round trip per authorized read": an authorized read by id is one
// statement. Whether the caller sees the family (a key: its org and environment; a user:
// membership) is read with the rows, never by a query of its own first, and a refusal (403/404)
// is decided from that same statement.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { deviceAgent } from './devices.js';
import { bearer, createOrg, longSession, mintKey, newSession, type Session } from './identity.js';
import { type StatementRecorder, statementRecorder } from './statements.js';

/** A statement that reads a product table (authentication and metering read others). */
const PRODUCT_TABLE =
  /"(families|family_members|children|policies|policy_rules|devices|family_connections|webhooks|webhook_deliveries|enforcement_jobs|viewing_history|age_signals)"/;

interface Made {
  familyId: string;
  childId: string;
  policyId: string;
  webhookId: string;
  jobId: string;
}

/** Every id-taking GET of the product plane, with the least each success must show. */
const READS: Array<{ path: (m: Made) => string; items?: number }> = [
  { path: (m) => `/families/${m.familyId}` },
  { path: (m) => `/families/${m.familyId}/members`, items: 1 },
  { path: (m) => `/families/${m.familyId}/children`, items: 1 },
  { path: (m) => `/families/${m.familyId}/connections`, items: 1 },
  { path: (m) => `/webhooks?family_id=${m.familyId}`, items: 1 },
  { path: (m) => `/children/${m.childId}` },
  { path: (m) => `/children/${m.childId}/age-ratings` },
  { path: (m) => `/children/${m.childId}/age-signals`, items: 1 },
  { path: (m) => `/children/${m.childId}/policies`, items: 1 },
  { path: (m) => `/children/${m.childId}/devices`, items: 1 },
  { path: (m) => `/children/${m.childId}/enforcement/jobs`, items: 1 },
  { path: (m) => `/viewing-history/${m.childId}`, items: 1 },
  { path: (m) => `/policies/${m.policyId}` },
  { path: (m) => `/policies/${m.policyId}/rules`, items: 1 },
  { path: (m) => `/enforcement/jobs/${m.jobId}` },
  { path: (m) => `/webhooks/${m.webhookId}` },
  { path: (m) => `/webhooks/${m.webhookId}/deliveries`, items: 1 },
];

describe('authorized reads: one statement each', () => {
  let t: TestApp;
  let database: TestDatabase;
  let recorder: StatementRecorder;
  let owner: Session;
  let stranger: Session;
  let key: { authorization: string };
  let ownersFamily: Made;
  let keysFamily: Made;

  async function make(prefix: string, headers: Record<string, string>): Promise<Made> {
    const post = async (url: string, payload: object, status: number) => {
      const res = await t.app.inject({ method: 'POST', url: `${prefix}${url}`, headers, payload });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
      return res.json();
    };
    const setup = await post('/setup/quick', { child_name: 'Kid', birth_date: '2015-01-02' }, 201);
    const familyId = setup.family.id;
    const childId = setup.child.id;
    await post(`/families/${familyId}/connections`, { platform_id: 'nextdns' }, 201);
    const webhook = await post(
      '/webhooks',
      { family_id: familyId, url: 'http://127.0.0.1:9/hooks', events: ['*'] },
      201,
    );
    await post(`/webhooks/${webhook.id}/test`, {}, 202);
    const device = await post(`/children/${childId}/devices`, { device_name: 'Phone' }, 201);
    const report = await deviceAgent(t).report(device.device_key, {
      report_type: 'viewing',
      reported_at: '2026-01-15T11:00:00Z',
      payload: { platform: 'netflix', title: 'A Movie', watched_at: '2026-01-15T10:00:00Z' },
    });
    expect(report.statusCode, report.body).toBe(202);
    // A range the child's age (11) lies in: nothing is re-derived.
    await post(
      `/children/${childId}/age-signals`,
      { source: 'parent_declared', age_lower: 10, age_upper: 12 },
      201,
    );
    const job = await post(`/children/${childId}/enforce`, {}, 202);
    return { familyId, childId, policyId: setup.policy.id, webhookId: webhook.id, jobId: job.id };
  }

  beforeAll(async () => {
    recorder = statementRecorder();
    database = await createTestDatabase({ onStatement: recorder.onStatement });
    t = await buildTestApp({
      env: { WORKERS: 'off' },
      database,
      plugins: [recorder.plugin],
    });
    owner = await longSession(t);
    stranger = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    key = bearer((await mintKey(t.app, owner, org.id)).key);
    ownersFamily = await make('/api/v1', owner.auth);
    keysFamily = await make('/api/v1/developer', key);
  });

  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  /** The request's answer, after checking it read the product tables in one statement. */
  async function read(url: string, headers: Record<string, string>) {
    const { result, statements } = await recorder.during((probe) =>
      t.app.inject({ method: 'GET', url, headers: { ...headers, ...probe } }),
    );
    const product = statements.filter((statement) => PRODUCT_TABLE.test(statement));
    expect(product, `${url}:\n${product.join('\n')}`).toHaveLength(1);
    return result;
  }

  it.each(READS.map((r) => [r.path({} as Made).replace(/undefined/g, '{id}'), r] as const))(
    'GET %s: one statement to answer, to refuse a stranger and to hide from another tenant',
    async (_name, route) => {
      for (const [prefix, headers, made] of [
        ['/api/v1', owner.auth, ownersFamily],
        ['/api/v1/developer', key, keysFamily],
      ] as const) {
        const ok = await read(`${prefix}${route.path(made)}`, headers);
        expect(ok.statusCode, ok.body).toBe(200);
        // A key's family has no members: the owner's family shows each list's rows.
        if (route.items !== undefined && made === ownersFamily) {
          expect(ok.json().length, ok.body).toBeGreaterThanOrEqual(route.items);
        }
      }
      // A user who is not a member: 403 (a job hides it: 404); a key of another tenant: 404.
      const refused = await read(`/api/v1${route.path(ownersFamily)}`, stranger.auth);
      expect(refused.statusCode, refused.body).toBe(
        route.path(ownersFamily).startsWith('/enforcement/jobs/') ? 404 : 403,
      );
      const hidden = await read(`/api/v1/developer${route.path(ownersFamily)}`, key);
      expect(hidden.statusCode, hidden.body).toBe(404);
    },
  );
});
