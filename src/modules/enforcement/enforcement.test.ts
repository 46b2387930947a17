// CONTRACT.md §8 enforcement jobs on a sandbox deployment: what a run reports per platform,
// armed failures, unsupported platforms, the platform_ids filter, and who may start a run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, longSession, mintKey } from '../../../test/identity.js';
import { eventually } from '../../../test/tcp-proxy.js';

type Headers = Record<string, string>;

interface Job {
  id: string;
  child_id: string;
  policy_id: string;
  policy_version: number;
  trigger_type: string;
  status: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  results: Array<{
    platform_id: string;
    connection_id: string;
    status: string;
    rules_applied: number;
    rules_skipped: number;
    rules_failed: number;
    error_message: string | null;
  }>;
}

const JOB_FIELDS = [
  'id',
  'child_id',
  'policy_id',
  'policy_version',
  'trigger_type',
  'status',
  'created_at',
  'started_at',
  'completed_at',
  'results',
].sort();

let t: TestApp;
const alice: Headers = { 'x-sandbox-session': 'enforcement-alice' };

async function quickSetup(who: Headers, birthDate = '2015-01-10') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/setup/quick',
    headers: who,
    payload: { child_name: 'Mia', birth_date: birthDate },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return {
    familyId: body.family.id as string,
    childId: body.child.id as string,
    policyId: body.policy.id as string,
    enabled: (body.rules as Array<{ category: string; enabled: boolean }>)
      .filter((rule) => rule.enabled)
      .map((rule) => rule.category),
  };
}

async function connect(who: Headers, familyId: string, platformId: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/families/${familyId}/connections`,
    headers: who,
    payload: { platform_id: platformId },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function enforce(who: Headers, childId: string, body: object = {}): Promise<Job> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/children/${childId}/enforce`,
    headers: who,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

async function finished(who: Headers, jobId: string): Promise<Job> {
  let job: Job | undefined;
  await eventually(async () => {
    const res = await t.app.inject({ url: `/api/v1/enforcement/jobs/${jobId}`, headers: who });
    expect(res.statusCode).toBe(200);
    job = res.json();
    return job?.status !== 'pending' && job?.status !== 'running';
  }, `enforcement job ${jobId} to finish`);
  return job as Job;
}

/** What the capability rule predicts, from the public catalog and registry. */
async function expectedCounts(platformId: string, enabled: string[]) {
  const platform = (await t.app.inject({ url: `/api/v1/platforms/${platformId}` })).json();
  const registry: Array<{ category: string; capabilities: string[] }> = (
    await t.app.inject({ url: '/api/v1/rules/categories' })
  ).json();
  const capabilities = new Set<string>(platform.capabilities);
  const applied = enabled.filter((category) =>
    registry
      .find((entry) => entry.category === category)
      ?.capabilities.some((capability) => capabilities.has(capability)),
  ).length;
  return { applied, skipped: enabled.length - applied };
}

const resultOf = (job: Job, platformId: string) => {
  const result = job.results.find((r) => r.platform_id === platformId);
  expect(result, `a result for ${platformId}`).toBeDefined();
  return result as Job['results'][number];
};

const arm = (who: Headers, platformId: string, body: object) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/sandbox/platforms/${platformId}/fail`,
    headers: who,
    payload: body,
  });

const disarm = (who: Headers, platformId: string, familyId: string) =>
  t.app.inject({
    method: 'DELETE',
    url: `/api/v1/sandbox/platforms/${platformId}/fail?family_id=${familyId}`,
    headers: who,
  });

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('enforcement runs (sandbox adapters)', () => {
  let setup: Awaited<ReturnType<typeof quickSetup>>;
  const connections: Record<string, string> = {};

  beforeAll(async () => {
    setup = await quickSetup(alice);
    connections.nextdns = await connect(alice, setup.familyId, 'nextdns');
    connections.xbox = await connect(alice, setup.familyId, 'xbox');
  });

  it('queues a pending job (202) and completes it with capability-based counts per platform', async () => {
    const queued = await enforce(alice, setup.childId);
    expect(Object.keys(queued).sort()).toEqual(JOB_FIELDS);
    expect(queued).toMatchObject({
      child_id: setup.childId,
      policy_id: setup.policyId,
      trigger_type: 'manual',
      status: 'pending',
      created_at: t.clock.now().toISOString(),
      started_at: null,
      completed_at: null,
      results: [],
    });
    const policy = (
      await t.app.inject({ url: `/api/v1/policies/${setup.policyId}`, headers: alice })
    ).json();
    expect(queued.policy_version).toBe(policy.version);

    const job = await finished(alice, queued.id);
    expect(job.status).toBe('completed');
    expect(job.started_at).toBe(t.clock.now().toISOString());
    expect(job.completed_at).toBe(t.clock.now().toISOString());
    expect(job.results).toHaveLength(2);
    for (const platformId of ['nextdns', 'xbox']) {
      const expected = await expectedCounts(platformId, setup.enabled);
      // The fixture is meaningful only if each platform both applies and skips something.
      expect(expected.applied).toBeGreaterThan(0);
      expect(expected.skipped).toBeGreaterThan(0);
      expect(resultOf(job, platformId)).toEqual({
        platform_id: platformId,
        connection_id: connections[platformId],
        status: 'success',
        rules_applied: expected.applied,
        rules_skipped: expected.skipped,
        rules_failed: 0,
        error_message: null,
      });
    }
  });

  it('records the last enforcement on each connection', async () => {
    t.clock.advance(60_000);
    await finished(alice, (await enforce(alice, setup.childId)).id);
    const list = await t.app.inject({
      url: `/api/v1/families/${setup.familyId}/connections`,
      headers: alice,
    });
    for (const connection of list.json()) {
      expect(connection).toMatchObject({
        last_enforcement_at: t.clock.now().toISOString(),
        last_enforcement_status: 'success',
      });
    }
  });

  it('counts only enabled rules (a teen has some off)', async () => {
    const teen = await quickSetup(alice, '2012-03-01');
    await connect(alice, teen.familyId, 'controld');
    const job = await finished(alice, (await enforce(alice, teen.childId)).id);
    const expected = await expectedCounts('controld', teen.enabled);
    expect(teen.enabled.length).toBeLessThan(20);
    expect(resultOf(job, 'controld')).toMatchObject({
      status: 'success',
      rules_applied: expected.applied,
      rules_skipped: expected.skipped,
    });
  });

  it('an armed failure makes one platform fail (partial); it counts down', async () => {
    const armed = await arm(alice, 'nextdns', {
      family_id: setup.familyId,
      times: 1,
      message: 'DNS profile locked',
    });
    expect(armed.statusCode, armed.body).toBe(201);
    expect(armed.json()).toEqual({
      family_id: setup.familyId,
      platform_id: 'nextdns',
      remaining: 1,
      message: 'DNS profile locked',
      created_at: t.clock.now().toISOString(),
    });
    const job = await finished(alice, (await enforce(alice, setup.childId)).id);
    expect(job.status).toBe('partial');
    const expected = await expectedCounts('nextdns', setup.enabled);
    expect(resultOf(job, 'nextdns')).toMatchObject({
      status: 'failed',
      rules_applied: 0,
      rules_skipped: expected.skipped,
      rules_failed: expected.applied,
      error_message: 'simulated failure (sandbox): DNS profile locked',
    });
    expect(resultOf(job, 'xbox').status).toBe('success');
    const connection = (
      await t.app.inject({
        url: `/api/v1/families/${setup.familyId}/connections`,
        headers: alice,
      })
    )
      .json()
      .find((c: { platform_id: string }) => c.platform_id === 'nextdns');
    expect(connection.last_enforcement_status).toBe('failed');

    // Used up: the next run succeeds everywhere.
    const next = await finished(alice, (await enforce(alice, setup.childId)).id);
    expect(next.status).toBe('completed');
  });

  it('failures armed on every platform fail the job, until cleared', async () => {
    for (const platformId of ['nextdns', 'xbox']) {
      const armed = await arm(alice, platformId, { family_id: setup.familyId });
      expect(armed.json()).toMatchObject({ remaining: null, message: 'platform unavailable' });
    }
    for (let run = 0; run < 2; run += 1) {
      const job = await finished(alice, (await enforce(alice, setup.childId)).id);
      expect(job.status).toBe('failed');
      expect(job.results.map((r) => r.status)).toEqual(['failed', 'failed']);
    }
    for (const platformId of ['nextdns', 'xbox']) {
      expect((await disarm(alice, platformId, setup.familyId)).statusCode).toBe(204);
    }
    // Clearing twice is fine.
    expect((await disarm(alice, 'xbox', setup.familyId)).statusCode).toBe(204);
    const job = await finished(alice, (await enforce(alice, setup.childId)).id);
    expect(job.status).toBe('completed');
  });

  it('narrows a run to platform_ids, and refuses ids that are not connected', async () => {
    const job = await finished(
      alice,
      (await enforce(alice, setup.childId, { platform_ids: ['xbox', 'xbox'] })).id,
    );
    expect(job.results.map((r) => r.platform_id)).toEqual(['xbox']);
    const cases: Array<[object, string]> = [
      [{ platform_ids: ['netflix'] }, 'platform_ids: netflix is not connected to this family'],
      [{ platform_ids: [] }, 'platform_ids must have at least 1 items'],
      [
        { platform_ids: ['has space'] },
        "platform_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'",
      ],
      [{ platform_ids: 'xbox' }, 'platform_ids must be an array'],
    ];
    for (const [body, message] of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/children/${setup.childId}/enforce`,
        headers: alice,
        payload: body,
      });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toBe(message);
    }
    for (const hostile of [null, 1e308, {}, [null], ['\u0000'], ['x'.repeat(70_000)], [[]]]) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/children/${setup.childId}/enforce`,
        headers: alice,
        payload: { platform_ids: hostile },
      });
      expect(res.statusCode, JSON.stringify(hostile).slice(0, 40)).toBe(400);
    }
  });

  it('validates the failure switch', async () => {
    const cases: Array<[string, object, number, string]> = [
      ['nextdns', {}, 400, 'family_id is required'],
      [
        'nextdns',
        { family_id: setup.familyId, times: 0 },
        400,
        'times must be an integer between 1 and 1000',
      ],
      ['acme-router', { family_id: setup.familyId }, 404, 'platform not found'],
      ['nextdns', { family_id: crypto.randomUUID() }, 404, 'family not found'],
    ];
    for (const [platformId, body, status, message] of cases) {
      const res = await arm(alice, platformId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().message).toBe(message);
    }
    const noFamily = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/sandbox/platforms/nextdns/fail',
      headers: alice,
    });
    expect(noFamily.statusCode).toBe(400);
    expect(noFamily.json().message).toBe('family_id is required');
  });
});

describe('enforcement edge cases', () => {
  it('reports a platform outside the catalog as unsupported; unsupported is not a success', async () => {
    const setup = await quickSetup(alice);
    const unknown = await connect(alice, setup.familyId, 'acme-router-9000');
    const onlyUnknown = await finished(alice, (await enforce(alice, setup.childId)).id);
    // The policy reached no platform: the job failed (CONTRACT §8).
    expect(onlyUnknown.status).toBe('failed');
    expect(onlyUnknown.results).toEqual([
      {
        platform_id: 'acme-router-9000',
        connection_id: unknown,
        status: 'unsupported',
        rules_applied: 0,
        rules_skipped: 0,
        rules_failed: 0,
        error_message: 'acme-router-9000 is not in the platform catalog; no adapter can enforce it',
      },
    ]);
    await connect(alice, setup.familyId, 'netflix');
    // One success beside the unsupported platform: in force somewhere, not everywhere.
    const someWhere = await finished(alice, (await enforce(alice, setup.childId)).id);
    expect(someWhere.status).toBe('partial');
    expect(someWhere.results.map((r: { status: string }) => r.status).sort()).toEqual([
      'success',
      'unsupported',
    ]);
    await arm(alice, 'netflix', { family_id: setup.familyId });
    const failed = await finished(alice, (await enforce(alice, setup.childId)).id);
    expect(failed.status).toBe('failed');
  });

  it('completes with no results when the family has no connection', async () => {
    const setup = await quickSetup(alice);
    const job = await finished(alice, (await enforce(alice, setup.childId)).id);
    expect(job).toMatchObject({ status: 'completed', results: [] });
  });

  it('refuses a child without an active policy (400), and ids it cannot see', async () => {
    const setup = await quickSetup(alice);
    const child = await t.app.inject({
      method: 'POST',
      url: `/api/v1/families/${setup.familyId}/children`,
      headers: alice,
      payload: { name: 'Noa', birth_date: '2016-05-05' },
    });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/children/${child.json().id}/enforce`,
      headers: alice,
      payload: {},
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Bad Request',
      message: 'no active policy found',
      code: 400,
    });
    const paused = await t.app.inject({
      method: 'POST',
      url: `/api/v1/policies/${setup.policyId}/pause`,
      headers: alice,
    });
    expect(paused.statusCode).toBe(200);
    const afterPause = await t.app.inject({
      method: 'POST',
      url: `/api/v1/children/${setup.childId}/enforce`,
      headers: alice,
    });
    expect(afterPause.json().message).toBe('no active policy found');

    const unknown = await t.app.inject({
      method: 'POST',
      url: `/api/v1/children/${crypto.randomUUID()}/enforce`,
      headers: alice,
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('child not found');
    const malformed = await t.app.inject({
      url: '/api/v1/enforcement/jobs/nope',
      headers: alice,
    });
    expect(malformed.json()).toMatchObject({ code: 400, message: 'invalid job ID' });
    const missing = await t.app.inject({
      url: `/api/v1/enforcement/jobs/${crypto.randomUUID()}`,
      headers: alice,
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('enforcement job not found');
  });

  it('serves the developer surface to API keys, by scope', async () => {
    const owner = await longSession(t);
    const org = await createOrg(t.app, owner);
    const full = bearer((await mintKey(t.app, owner, org.id)).key);
    const readOnly = bearer(
      (await mintKey(t.app, owner, org.id, { scopes: ['read:enforcement'] })).key,
    );
    const setup = await quickSetup(full);
    const queued = await t.app.inject({
      method: 'POST',
      url: `/api/v1/developer/children/${setup.childId}/enforce`,
      headers: full,
    });
    expect(queued.statusCode).toBe(202);
    const refused = await t.app.inject({
      method: 'POST',
      url: `/api/v1/developer/children/${setup.childId}/enforce`,
      headers: readOnly,
    });
    expect(refused.statusCode).toBe(403);
    const job = await finished(readOnly, queued.json().id);
    expect(job.status).toBe('completed');
    const armRefused = await arm(readOnly, 'xbox', { family_id: setup.familyId });
    expect(armRefused.statusCode).toBe(403);
  });
});
