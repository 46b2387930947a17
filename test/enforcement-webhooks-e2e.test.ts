// Enforcement and webhooks end to end on a real database: quick setup → two sandbox platforms
// connected → enforce → the job completes with per-platform counts; one platform made to fail →
// partial; an integrator's endpoint receives enforcement.completed and enforcement.partial,
// signed the Standard Webhooks way (checked with the `standardwebhooks` library).
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPlatform } from '../src/modules/platforms/catalog.js';
import { findRuleCategory } from '../src/modules/rules/registry.js';
import { buildTestApp, type TestApp } from './app.js';
import { TestClock } from './clock.js';
import { eventually } from './tcp-proxy.js';
import { WebhookReceiver } from './webhook-receiver.js';

const who = { 'x-sandbox-session': 'e2e-integrator' };
const PLATFORMS = ['nextdns', 'android'] as const;

interface Rule {
  category: string;
  enabled: boolean;
}

interface JobResult {
  platform_id: string;
  connection_id: string;
  status: string;
  rules_applied: number;
  rules_skipped: number;
  rules_failed: number;
  error_message: string | null;
}

/** What a platform's capabilities cover among the enabled rules, derived from the catalogs. */
function expectedCounts(platformId: string, rules: Rule[]) {
  const platform = findPlatform(platformId);
  if (!platform) {
    throw new Error(`${platformId} is not in the catalog`);
  }
  const enabled = rules.filter((rule) => rule.enabled);
  const covered = enabled.filter((rule) =>
    findRuleCategory(rule.category)?.capabilities.some((c) => platform.capabilities.includes(c)),
  ).length;
  return { covered, uncovered: enabled.length - covered };
}

describe('enforcement and webhooks, end to end', () => {
  let t: TestApp;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    // Verifiers refuse timestamps far from their own now: the app's clock starts at the real one.
    t = await buildTestApp({ clock: new TestClock(new Date()) });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  async function call(method: 'GET' | 'POST', url: string, payload?: object) {
    const res = await t.app.inject({ method, url, headers: who, payload });
    return { status: res.statusCode, body: res.json() };
  }

  async function enforceAndWait(childId: string, until: string) {
    const queued = await call('POST', `/api/v1/children/${childId}/enforce`, {});
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(queued.body).toMatchObject({ status: 'pending', trigger_type: 'manual' });
    let job = queued.body;
    await eventually(async () => {
      job = (await call('GET', `/api/v1/enforcement/jobs/${queued.body.id}`)).body;
      return job.status === until;
    }, `the job to be ${until}`);
    return job as { id: string; status: string; results: JobResult[]; completed_at: string };
  }

  it('completes, goes partial when a platform fails, fails when none is reached, and tells the endpoint each time', async () => {
    const setup = await call('POST', '/api/v1/setup/quick', {
      child_name: 'Noa',
      birth_date: '2014-09-12',
    });
    expect(setup.status).toBe(201);
    const familyId: string = setup.body.family.id;
    const childId: string = setup.body.child.id;
    const rules: Rule[] = setup.body.rules;

    const hook = await call('POST', '/api/v1/webhooks', {
      family_id: familyId,
      url: receiver.url,
      events: ['enforcement.completed', 'enforcement.partial', 'enforcement.failed'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const secret: string = hook.body.secret;
    expect(secret).toMatch(/^whsec_/);

    const connections = new Map<string, string>();
    for (const platformId of PLATFORMS) {
      const connection = await call('POST', `/api/v1/families/${familyId}/connections`, {
        platform_id: platformId,
      });
      expect(connection.status).toBe(201);
      connections.set(platformId, connection.body.id);
    }

    const completed = await enforceAndWait(childId, 'completed');
    expect(completed.results).toHaveLength(2);
    for (const platformId of PLATFORMS) {
      const { covered, uncovered } = expectedCounts(platformId, rules);
      expect(covered).toBeGreaterThan(0);
      expect(completed.results.find((r) => r.platform_id === platformId)).toEqual({
        platform_id: platformId,
        connection_id: connections.get(platformId),
        status: 'success',
        rules_applied: covered,
        rules_skipped: uncovered,
        rules_failed: 0,
        error_message: null,
      });
    }

    const armed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sandbox/platforms/android/fail',
      headers: who,
      payload: { family_id: familyId, times: 1 },
    });
    expect(armed.statusCode, armed.body).toBeLessThan(300);
    const partial = await enforceAndWait(childId, 'partial');
    const failed = partial.results.find((r) => r.platform_id === 'android');
    expect(failed).toMatchObject({
      status: 'failed',
      rules_applied: 0,
      rules_failed: expectedCounts('android', rules).covered,
    });
    expect(failed?.error_message).toMatch(/simulated/);
    expect(partial.results.find((r) => r.platform_id === 'nextdns')?.status).toBe('success');

    // Nothing reached: a platform outside the catalog (unsupported) beside both platforms
    // failing is no success at all, so the job failed (CONTRACT §8).
    const unknown = await call('POST', `/api/v1/families/${familyId}/connections`, {
      platform_id: 'acme-router-9000',
    });
    expect(unknown.status).toBe(201);
    for (const platformId of PLATFORMS) {
      const arm = await t.app.inject({
        method: 'POST',
        url: `/api/v1/sandbox/platforms/${platformId}/fail`,
        headers: who,
        payload: { family_id: familyId, times: 1 },
      });
      expect(arm.statusCode, arm.body).toBeLessThan(300);
    }
    const none = await enforceAndWait(childId, 'failed');
    expect(none.results.map((r) => r.status).sort()).toEqual(['failed', 'failed', 'unsupported']);

    // The three events arrive, each verified by a Standard Webhooks implementation.
    await eventually(
      async () => receiver.received.length >= 3,
      'the three enforcement webhooks to arrive',
    );
    const verifier = new Webhook(secret);
    const byJob = new Map<string, { type: string; status: string }>();
    for (const request of receiver.received) {
      const payload = verifier.verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }) as { type: string; family_id: string; data: { id: string; status: string } };
      expect(payload.family_id).toBe(familyId);
      byJob.set(payload.data.id, { type: payload.type, status: payload.data.status });
    }
    expect(byJob.get(completed.id)).toEqual({ type: 'enforcement.completed', status: 'completed' });
    expect(byJob.get(partial.id)).toEqual({ type: 'enforcement.partial', status: 'partial' });
    expect(byJob.get(none.id)).toEqual({ type: 'enforcement.failed', status: 'failed' });

    // The connections remember how their last enforcement went.
    const listed = await call('GET', `/api/v1/families/${familyId}/connections`);
    const android = listed.body.find((c: { platform_id: string }) => c.platform_id === 'android');
    expect(android.last_enforcement_status).toBe('failed');
    expect(android.last_enforcement_at).toBe(none.completed_at);
  });
});
