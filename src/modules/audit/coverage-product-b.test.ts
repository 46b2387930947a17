// CONTRACT.md §12.1 over connections, devices, enforcement, webhooks and MCP tokens: every
// successful write states exactly one audit entry (action, target, actor, the request's id,
// what changed) in its change; device reports and acks name the device; Haven's own acts
// (enforcement outcomes, releases, a webhook disabled after 5 days of failures) are system
// entries; no personal value and no secret reaches the log; a GET of the device policy, a
// repeated revocation and an idempotent replay write none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { deviceAgent, quickSetup } from '../../../test/devices.js';
import { longSession, type Session } from '../../../test/identity.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { DEMO_CHILDREN } from '../demo/demo-family.js';
import type { AuditEntry } from './entry.js';
import { entryOf } from './store.js';

const SANDBOX_PROVIDER = 'did:ocss:sandbox-provider';
const DAY = 24 * 3600 * 1000;

type Answer = Awaited<ReturnType<TestApp['app']['inject']>>;

let t: TestApp;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  await receiver.start();
  // An endpoint under …/failing always fails: the auto-disable case.
  receiver.answer = (request) => ({ status: request.path.includes('failing') ? 503 : 204 });
  t = await buildTestApp({
    tuning: { jobPollingIntervalSeconds: 0.5, webhookRetryDelaysSeconds: [0, 0, 0, 0, 0, 0, 0] },
  });
});
afterAll(async () => {
  await t.close();
  await receiver.stop();
});

/** One caller's requests under /api/v1. */
function caller(headers: Record<string, string>) {
  return (method: string, url: string, payload?: object, extra: Record<string, string> = {}) =>
    t.app.inject({
      method: method as 'GET',
      url: `/api/v1${url}`,
      headers: { ...headers, ...extra },
      ...(payload ? { payload } : {}),
    });
}

async function entriesWhere(column: 'request_id' | 'target_id', value: string) {
  const rows = await t.database.handle.db
    .selectFrom('audit_entries')
    .selectAll()
    .where(column, '=', value)
    .orderBy('seq')
    .execute();
  return rows.map((row) => entryOf(row as Parameters<typeof entryOf>[0]));
}

/** The one entry the request wrote (it succeeded), found by the request id it answered with. */
async function theEntryOf(res: Answer): Promise<AuditEntry> {
  expect(res.statusCode, res.body).toBeLessThan(300);
  const requestId = res.headers['x-request-id'] as string;
  expect(requestId, 'every answer names its request').toMatch(/^\S{8,}$/);
  const entries = await entriesWhere('request_id', requestId);
  expect(entries, `entries of ${res.raw.req.method} ${res.raw.req.url}`).toHaveLength(1);
  return entries[0] as AuditEntry;
}

/** A request that succeeded (or answered 304) and wrote no entry. */
async function noEntryOf(res: Answer): Promise<void> {
  expect(res.statusCode, res.body).toBeLessThan(400);
  expect(await entriesWhere('request_id', res.headers['x-request-id'] as string)).toEqual([]);
}

/** The family's whole log as its API shows it, as text (for the no-personal-value scans). */
async function logText(who: Session, familyId: string): Promise<string> {
  const res = await caller(who.auth)('GET', `/families/${familyId}/audit-log?limit=200`);
  expect(res.statusCode, res.body).toBe(200);
  return JSON.stringify(res.json());
}

async function newFamily(who: Session, name = 'The Hoppers'): Promise<string> {
  const res = await caller(who.auth)('POST', '/families', { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** A code from the sandbox provider's consent flow, as the parent's browser would get it. */
async function authorizationCode(): Promise<string> {
  const query = new URLSearchParams({
    redirect_uri: 'https://app.example/callback',
    state: 's1',
    decision: 'approve',
  });
  const res = await t.app.inject({ url: `/oauth/authorize?${query}` });
  expect(res.statusCode).toBe(302);
  return new URL(res.headers.location as string).searchParams.get('code') as string;
}

/** The worker's entry for a job's outcome, once there (polled with a deadline). */
async function outcomeOf(jobId: string): Promise<AuditEntry> {
  let outcomes: AuditEntry[] = [];
  await eventually(async () => {
    outcomes = (await entriesWhere('target_id', jobId)).filter(
      (entry) => entry.actor.type === 'system',
    );
    return outcomes.length > 0;
  }, `the outcome entry of job ${jobId}`);
  expect(outcomes).toHaveLength(1);
  return outcomes[0] as AuditEntry;
}

async function jobFinished(jobId: string): Promise<void> {
  await eventually(async () => {
    const job = await t.database.handle.db
      .selectFrom('enforcement_jobs')
      .select('status')
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    return job.status !== 'pending' && job.status !== 'running';
  }, `job ${jobId} to finish`);
}

describe('connections', () => {
  const SECRET = 'nextdns-api-key-7f3a9c1e';
  const PROFILE = 'prof-5b2e91';
  let owner: Session;
  let familyId: string;

  beforeAll(async () => {
    owner = await longSession(t);
    familyId = await newFamily(owner);
  });

  it('create, renew, OAuth completion and delete: one entry each, credentials named only', async () => {
    const call = caller(owner.auth);
    const created = await call('POST', `/families/${familyId}/connections`, {
      platform_id: 'nextdns',
      credentials: { api_key: SECRET, profile_id: PROFILE },
    });
    const id = created.json().id as string;
    expect(await theEntryOf(created)).toMatchObject({
      family_id: familyId,
      action: 'connection.created',
      target: { type: 'connection', id },
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      request_id: created.headers['x-request-id'],
    });
    expect((await theEntryOf(created)).changes).toEqual({
      platform_id: 'nextdns',
      status: 'connected',
      credentials: '[redacted]',
    });

    const renewed = await call('PATCH', `/connections/${id}`, {
      credentials: { api_key: `${SECRET}-2`, profile_id: PROFILE },
    });
    expect(await theEntryOf(renewed)).toMatchObject({
      action: 'connection.credentials_renewed',
      target: { type: 'connection', id },
      actor: { type: 'user', label: 'owner' },
      changes: { platform_id: 'nextdns', status: 'connected', credentials: '[redacted]' },
    });

    const code = await authorizationCode();
    const linked = await call('POST', `/families/${familyId}/connections`, {
      platform_id: SANDBOX_PROVIDER,
      authorization_code: code,
    });
    expect(linked.json().profiles.length).toBeGreaterThan(0);
    expect((await theEntryOf(linked)).changes).toEqual({
      platform_id: SANDBOX_PROVIDER,
      status: 'connected',
      credentials: '[redacted]',
      profiles: '[redacted]',
    });

    const deleted = await call('DELETE', `/connections/${id}`);
    expect(deleted.statusCode).toBe(204);
    expect(await theEntryOf(deleted)).toMatchObject({
      action: 'connection.deleted',
      target: { type: 'connection', id },
      changes: { platform_id: 'nextdns' },
    });

    const log = await logText(owner, familyId);
    for (const secret of [SECRET, PROFILE, code, 'api_key', 'access_token']) {
      expect(log).not.toContain(secret);
    }
    for (const child of DEMO_CHILDREN) {
      expect(log).not.toContain(child.name);
    }
  });

  it('an idempotent replay writes no second entry', async () => {
    const call = caller(owner.auth);
    const once = { 'idempotency-key': 'coverage-connection-1' };
    const first = await call(
      'POST',
      `/families/${familyId}/connections`,
      { platform_id: 'xbox' },
      once,
    );
    expect((await theEntryOf(first)).action).toBe('connection.created');
    const replay = await call(
      'POST',
      `/families/${familyId}/connections`,
      { platform_id: 'xbox' },
      once,
    );
    expect(replay.json().id).toBe(first.json().id);
    await noEntryOf(replay);
    expect(await entriesWhere('target_id', first.json().id)).toHaveLength(1);
  });
});

describe('devices and their agents', () => {
  const TITLE = 'The Secret Garden, episode 3';
  const URL_VISITED = 'https://private.example/diary?who=mia';
  let owner: Session;

  it('register, report, ack, revoke: one entry each; the agent acts as the device; polls write none', async () => {
    owner = await longSession(t);
    const setup = await quickSetup(t, owner.auth);
    const agent = deviceAgent(t);
    const registerRes = await caller(owner.auth)('POST', `/children/${setup.childId}/devices`, {
      device_name: 'Mia’s tablet',
      platform_id: 'android',
      device_model: 'Pixel 8',
    });
    const { device, device_key: key } = registerRes.json();
    expect(await theEntryOf(registerRes)).toMatchObject({
      family_id: setup.familyId,
      action: 'device.registered',
      target: { type: 'device', id: device.id },
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      changes: { device_name: '[redacted]', platform_id: 'android', device_model: 'Pixel 8' },
    });

    const viewing = await agent.report(key, {
      report_type: 'viewing',
      payload: { platform: 'netflix', title: TITLE, watched_at: '2026-01-02T19:00:00Z' },
      reported_at: '2026-01-02T19:30:00Z',
    });
    expect(viewing.statusCode, viewing.body).toBe(202);
    const deviceLabel = { type: 'device', id: device.id, label: device.key_prefix };
    expect(await theEntryOf(viewing)).toMatchObject({
      family_id: setup.familyId,
      action: 'device.reported',
      target: { type: 'device', id: device.id },
      actor: deviceLabel,
      request_id: viewing.headers['x-request-id'],
    });
    expect((await theEntryOf(viewing)).changes).toEqual({
      report_type: 'viewing',
      payload: '[redacted]',
      payload_fields: 3,
      viewing_history: '[redacted]',
    });
    const web = await agent.report(key, {
      report_type: 'web_activity',
      payload: { url: URL_VISITED, seconds: 40 },
      reported_at: '2026-01-02T19:31:00Z',
    });
    expect((await theEntryOf(web)).changes).toEqual({
      report_type: 'web_activity',
      payload: '[redacted]',
      payload_fields: 2,
    });

    const poll = await agent.policy(key);
    expect(poll.statusCode).toBe(200);
    await noEntryOf(poll);
    const version = poll.json().version as number;
    const ack = await agent.ack(key, { version });
    expect(await theEntryOf(ack)).toMatchObject({
      action: 'device.acknowledged',
      target: { type: 'device', id: device.id },
      actor: deviceLabel,
      changes: { policy_version: version },
    });
    await noEntryOf(await agent.policy(key, {}, `?since_version=${version}`));

    const revoked = await caller(owner.auth)('DELETE', `/devices/${device.id}`);
    expect(await theEntryOf(revoked)).toMatchObject({
      action: 'device.revoked',
      target: { type: 'device', id: device.id },
      actor: { type: 'user', label: 'owner' },
      changes: { status: 'revoked' },
    });
    // Revoking again changes nothing: 204, no entry.
    await noEntryOf(await caller(owner.auth)('DELETE', `/devices/${device.id}`));

    const log = await logText(owner, setup.familyId);
    for (const personal of ['Mia’s tablet', TITLE, URL_VISITED, 'private.example', key]) {
      expect(log).not.toContain(personal);
    }
  });
});

describe('enforcement', () => {
  let owner: Session;
  let setup: Awaited<ReturnType<typeof quickSetup>>;

  beforeAll(async () => {
    owner = await longSession(t);
    setup = await quickSetup(t, owner.auth);
    for (const platformId of ['nextdns', 'xbox']) {
      const res = await caller(owner.auth)('POST', `/families/${setup.familyId}/connections`, {
        platform_id: platformId,
      });
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  it('a requested job is one entry by its caller, its outcome one entry by the worker', async () => {
    const requested = await caller(owner.auth)('POST', `/children/${setup.childId}/enforce`, {
      platform_ids: ['nextdns'],
    });
    expect(requested.statusCode, requested.body).toBe(202);
    const job = requested.json();
    expect(await theEntryOf(requested)).toMatchObject({
      family_id: setup.familyId,
      action: 'enforcement.requested',
      target: { type: 'enforcement_job', id: job.id },
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      changes: {
        child_id: setup.childId,
        policy_id: setup.policyId,
        policy_version: job.policy_version,
        platform_ids: ['nextdns'],
      },
    });

    const outcome = await outcomeOf(job.id);
    const finished = (
      await caller(owner.auth)('GET', `/enforcement/jobs/${job.id}`)
    ).json() as typeof job;
    expect(outcome).toMatchObject({
      family_id: setup.familyId,
      action: 'enforcement.completed',
      target: { type: 'enforcement_job', id: job.id },
      actor: { type: 'system', id: 'haven', label: 'enforcement worker' },
      request_id: null,
    });
    const [result] = finished.results;
    expect(outcome.changes).toEqual({
      trigger_type: 'manual',
      status: 'completed',
      policy_id: setup.policyId,
      policy_version: finished.policy_version,
      platforms: [
        {
          platform_id: 'nextdns',
          status: 'success',
          rules_applied: result.rules_applied,
          rules_skipped: result.rules_skipped,
          rules_failed: 0,
        },
      ],
    });
  });

  it('arming and clearing a sandbox failure are entries; a partial outcome leaves the failure text out', async () => {
    const call = caller(owner.auth);
    const MESSAGE = 'router in Ada’s bedroom is down';
    const armed = await call('POST', '/sandbox/platforms/xbox/fail', {
      family_id: setup.familyId,
      times: 1,
      message: MESSAGE,
    });
    expect(armed.statusCode, armed.body).toBe(201);
    expect(await theEntryOf(armed)).toMatchObject({
      family_id: setup.familyId,
      action: 'sandbox_failure.armed',
      target: { type: 'platform', id: 'xbox' },
      actor: { type: 'user', label: 'owner' },
      changes: { times: 1, message: '[redacted]' },
    });
    const requested = await call('POST', `/children/${setup.childId}/enforce`, {});
    expect((await theEntryOf(requested)).changes).toMatchObject({ platform_ids: null });
    const outcome = await outcomeOf(requested.json().id);
    expect(outcome.action).toBe('enforcement.partial');
    expect(outcome.changes).toMatchObject({ trigger_type: 'manual', status: 'partial' });
    const statuses = (outcome.changes.platforms as Array<{ platform_id: string; status: string }>)
      .map(({ platform_id, status }) => `${platform_id}:${status}`)
      .sort();
    expect(statuses).toEqual(['nextdns:success', 'xbox:failed']);

    const again = await call('POST', '/sandbox/platforms/xbox/fail', {
      family_id: setup.familyId,
    });
    expect((await theEntryOf(again)).changes).toEqual({ times: null, message: '[redacted]' });
    const cleared = await call(
      'DELETE',
      `/sandbox/platforms/xbox/fail?family_id=${setup.familyId}`,
    );
    expect(cleared.statusCode).toBe(204);
    expect(await theEntryOf(cleared)).toMatchObject({
      action: 'sandbox_failure.cleared',
      target: { type: 'platform', id: 'xbox' },
      changes: {},
    });
    // Nothing armed any more: clearing again changes nothing and writes nothing.
    await noEntryOf(
      await call('DELETE', `/sandbox/platforms/xbox/fail?family_id=${setup.familyId}`),
    );

    const log = await logText(owner, setup.familyId);
    expect(log).not.toContain(MESSAGE);
    expect(log).not.toContain('simulated failure');
  });

  it("a release's outcome is the worker's entry with trigger_type release", async () => {
    const paused = await caller(owner.auth)('POST', `/policies/${setup.policyId}/pause`);
    expect(paused.statusCode, paused.body).toBe(200);
    let releaseId: string | undefined;
    await eventually(async () => {
      const release = await t.database.handle.db
        .selectFrom('enforcement_jobs')
        .select('id')
        .where('child_id', '=', setup.childId)
        .where('trigger_type', '=', 'release')
        .executeTakeFirst();
      releaseId = release?.id;
      return releaseId !== undefined;
    }, 'the release job');
    await jobFinished(releaseId as string);
    const outcome = await outcomeOf(releaseId as string);
    expect(outcome).toMatchObject({
      action: 'enforcement.completed',
      actor: { type: 'system', label: 'enforcement worker' },
      target: { type: 'enforcement_job', id: releaseId },
      changes: { trigger_type: 'release', status: 'completed' },
    });
    expect((outcome.changes.platforms as unknown[]).length).toBe(2);
  });
});

describe('webhooks', () => {
  let owner: Session;
  let familyId: string;

  beforeAll(async () => {
    owner = await longSession(t);
    familyId = await newFamily(owner);
  });

  it('create, update, test, retry and delete: one entry each; no URL, no secret', async () => {
    const call = caller(owner.auth);
    const created = await call('POST', '/webhooks', {
      family_id: familyId,
      url: receiver.url,
      events: ['child.created'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id, secret } = created.json();
    expect(await theEntryOf(created)).toMatchObject({
      family_id: familyId,
      action: 'webhook.created',
      target: { type: 'webhook', id },
      actor: { type: 'user', id: owner.userId, label: 'owner' },
    });
    expect((await theEntryOf(created)).changes).toEqual({
      url: '[redacted]',
      events: ['child.created'],
      active: true,
    });

    const updated = await call('PATCH', `/webhooks/${id}`, {
      url: `${receiver.url}?v=2`,
      events: ['child.created', 'child.updated'],
    });
    expect(await theEntryOf(updated)).toMatchObject({
      action: 'webhook.updated',
      target: { type: 'webhook', id },
      changes: { url: '[redacted]', events: ['child.created', 'child.updated'] },
    });
    const disabled = await call('PATCH', `/webhooks/${id}`, { active: false });
    expect((await theEntryOf(disabled)).changes).toEqual({ active: false });
    const enabled = await call('PATCH', `/webhooks/${id}`, { active: true });
    expect((await theEntryOf(enabled)).changes).toEqual({ active: true });

    const tested = await call('POST', `/webhooks/${id}/test`);
    expect(tested.statusCode, tested.body).toBe(202);
    const delivery = tested.json();
    expect(await theEntryOf(tested)).toMatchObject({
      action: 'webhook.test_sent',
      target: { type: 'webhook', id },
      changes: { event: 'test', delivery_id: delivery.id },
    });
    await eventually(async () => {
      const row = await t.database.handle.db
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('id', '=', delivery.id)
        .executeTakeFirstOrThrow();
      return row.status !== 'pending';
    }, 'the test delivery');
    const retried = await call('POST', `/webhooks/${id}/deliveries/${delivery.id}/retry`);
    expect(retried.statusCode, retried.body).toBe(202);
    expect(await theEntryOf(retried)).toMatchObject({
      action: 'webhook.delivery_retried',
      target: { type: 'webhook_delivery', id: delivery.id },
      changes: { webhook_id: id, delivery_id: retried.json().id, attempt: 2 },
    });

    const deleted = await call('DELETE', `/webhooks/${id}`);
    expect(deleted.statusCode).toBe(204);
    expect(await theEntryOf(deleted)).toMatchObject({
      action: 'webhook.deleted',
      target: { type: 'webhook', id },
      changes: {},
    });

    const log = await logText(owner, familyId);
    expect(log).not.toContain(secret);
    expect(log).not.toContain('127.0.0.1');
  });

  it('an endpoint failing for 5 days is disabled by Haven: a system entry', async () => {
    const call = caller(owner.auth);
    const created = await call('POST', '/webhooks', {
      family_id: familyId,
      url: `${receiver.url}/failing`,
      events: ['test'],
    });
    const { id } = created.json();
    const attempts = async () =>
      t.database.handle.db
        .selectFrom('webhook_deliveries')
        .select(['status'])
        .where('webhook_id', '=', id)
        .execute();
    expect((await call('POST', `/webhooks/${id}/test`)).statusCode).toBe(202);
    await eventually(async () => {
      const rows = await attempts();
      return rows.length === 8 && rows.every((row) => row.status === 'failed');
    }, 'eight failed attempts');
    t.clock.advance(5 * DAY);
    expect((await call('POST', `/webhooks/${id}/test`)).statusCode).toBe(202);
    let disabled: AuditEntry[] = [];
    await eventually(async () => {
      disabled = (await entriesWhere('target_id', id)).filter(
        (entry) => entry.action === 'webhook.disabled',
      );
      return disabled.length > 0;
    }, 'the webhook disabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0]).toMatchObject({
      family_id: familyId,
      actor: { type: 'system', id: 'haven', label: 'webhook delivery' },
      target: { type: 'webhook', id },
      request_id: null,
      changes: { active: false, disabled_reason: 'endpoint failing for 5 days' },
    });
  });
});

describe('MCP tokens and tool calls', () => {
  const LABEL = 'Grandma Ada’s assistant';

  it('minting and revoking are entries on the family chain; a tool call that changes something is the token’s entry', async () => {
    const owner = await longSession(t);
    const familyId = await newFamily(owner);
    const minted = await caller(owner.auth)('POST', '/mcp/tokens', {
      family_id: familyId,
      label: LABEL,
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const { token, plain } = minted.json();
    expect(await theEntryOf(minted)).toMatchObject({
      family_id: familyId,
      action: 'mcp_token.created',
      target: { type: 'mcp_token', id: token.id },
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      changes: { label: '[redacted]' },
    });

    const tool = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${plain}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'connect_platform', arguments: { platform_id: 'xbox' } },
      },
    });
    expect(tool.statusCode, tool.body).toBe(200);
    const result = tool.json().result;
    expect(result, tool.body).toBeDefined();
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(await theEntryOf(tool)).toMatchObject({
      family_id: familyId,
      action: 'connection.created',
      target: { type: 'connection', id: result.structuredContent.id },
      actor: { type: 'mcp_token', id: token.id, label: token.token_prefix },
      changes: { platform_id: 'xbox', status: 'connected' },
    });

    const revoked = await caller(owner.auth)('DELETE', `/mcp/tokens/${token.id}`);
    expect(revoked.statusCode).toBe(204);
    expect(await theEntryOf(revoked)).toMatchObject({
      action: 'mcp_token.revoked',
      target: { type: 'mcp_token', id: token.id },
      actor: { type: 'user', label: 'owner' },
    });
    await noEntryOf(await caller(owner.auth)('DELETE', `/mcp/tokens/${token.id}`));

    const log = await logText(owner, familyId);
    expect(log).not.toContain('Grandma');
    expect(log).not.toContain(plain);
  });
});
