// Enforcement beyond one request: automatic jobs on policy changes (and their coalescing),
// workers that find a job half-done or already done, and a production deployment (no
// simulated failures; a platform without a live adapter is unsupported).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createTestDatabase } from '../../../test/database.js';
import type { Session } from '../../../test/identity.js';
import { JwksServer, newSigningKey, signSession } from '../../../test/jwks-server.js';
import { productionEnv } from '../../../test/production.js';
import { eventually } from '../../../test/tcp-proxy.js';

type Headers = Record<string, string>;
interface Result {
  platform_id: string;
  status: string;
  rules_applied: number;
  rules_skipped: number;
  rules_failed: number;
  error_message: string | null;
}
interface Job {
  id: string;
  policy_id: string;
  policy_version: number;
  trigger_type: string;
  status: string;
  results: Result[];
}

const who: Headers = { 'x-sandbox-session': 'lifecycle' };

async function quickSetup(t: TestApp, headers: Headers) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/setup/quick',
    headers,
    payload: { child_name: 'Sam', birth_date: '2015-06-06' },
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

async function connect(t: TestApp, headers: Headers, familyId: string, platformId: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/families/${familyId}/connections`,
    headers,
    payload: { platform_id: platformId },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; status: string };
}

async function jobsOf(t: TestApp, headers: Headers, childId: string): Promise<Job[]> {
  const res = await t.app.inject({
    url: `/api/v1/children/${childId}/enforcement/jobs`,
    headers,
  });
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function putRule(t: TestApp, policyId: string, minutes: number) {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/api/v1/policies/${policyId}/rules/time_daily_limit`,
    headers: who,
    payload: { enabled: true, config: { daily_minutes: minutes } },
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function policyVersion(t: TestApp, policyId: string): Promise<number> {
  return (await t.app.inject({ url: `/api/v1/policies/${policyId}`, headers: who })).json().version;
}

describe('automatic enforcement on policy changes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('queues a policy_change job when the policy in force changes and a platform is connected', async () => {
    const setup = await quickSetup(t, who);
    await connect(t, who, setup.familyId, 'xbox');
    await putRule(t, setup.policyId, 75);
    const version = await policyVersion(t, setup.policyId);
    const [queued, ...others] = await jobsOf(t, who, setup.childId);
    expect(others).toEqual([]);
    expect(queued).toMatchObject({ trigger_type: 'policy_change', policy_id: setup.policyId });
    let job: Job | undefined;
    await eventually(async () => {
      job = (
        await t.app.inject({ url: `/api/v1/enforcement/jobs/${queued?.id}`, headers: who })
      ).json();
      return job?.status === 'completed';
    }, 'the policy_change job to complete');
    expect(job).toMatchObject({ policy_version: version, results: [{ platform_id: 'xbox' }] });
  });

  it('queues nothing without a connection, or for a policy not in force', async () => {
    const bare = await quickSetup(t, who);
    await putRule(t, bare.policyId, 80);
    expect(await jobsOf(t, who, bare.childId)).toEqual([]);

    const setup = await quickSetup(t, who);
    await connect(t, who, setup.familyId, 'nextdns');
    const draft = (
      await t.app.inject({
        method: 'POST',
        url: `/api/v1/children/${setup.childId}/policies`,
        headers: who,
        payload: { name: 'Holidays', priority: -5 },
      })
    ).json();
    await putRule(t, draft.id, 200);
    // Active, but outranked by the policy in force: nothing changes on the platforms.
    const activated = await t.app.inject({
      method: 'POST',
      url: `/api/v1/policies/${draft.id}/activate`,
      headers: who,
    });
    expect(activated.statusCode).toBe(200);
    // Subscribers run before the response is sent: nothing more can appear later.
    expect(await jobsOf(t, who, setup.childId)).toEqual([]);

    // Pausing the policy in force hands over to the other active one: that one is pushed.
    const pause = (policyId: string) =>
      t.app.inject({ method: 'POST', url: `/api/v1/policies/${policyId}/pause`, headers: who });
    expect((await pause(setup.policyId)).statusCode).toBe(200);
    const jobs = await jobsOf(t, who, setup.childId);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ trigger_type: 'policy_change', policy_id: draft.id });
    await eventually(
      async () => (await jobsOf(t, who, setup.childId))[0]?.status === 'completed',
      'the hand-over job to complete',
    );
    // Pausing the last active policy releases the child (release.test.ts has the rest).
    expect((await pause(draft.id)).statusCode).toBe(200);
    // (The test clock stands still: jobs are told apart by trigger, not by creation time.)
    const released = await jobsOf(t, who, setup.childId);
    expect(released.map((job) => job.trigger_type).sort()).toEqual(['policy_change', 'release']);
    const release = released.find((job) => job.trigger_type === 'release');
    expect(release).toMatchObject({ policy_id: draft.id });
    await eventually(
      async () =>
        (await jobsOf(t, who, setup.childId)).find((job) => job.id === release?.id)?.status ===
        'completed',
      'the release to complete',
    );
  });
});

describe('workers that come later', () => {
  it('coalesce pending policy changes, restart a half-done run and skip a finished one', async () => {
    const database = await createTestDatabase();
    const queueOnly = await buildTestApp({ database, env: { WORKERS: 'off' } });
    const setup = await quickSetup(queueOnly, who);
    await connect(queueOnly, who, setup.familyId, 'nextdns');
    await connect(queueOnly, who, setup.familyId, 'xbox');
    await putRule(queueOnly, setup.policyId, 70);
    await putRule(queueOnly, setup.policyId, 65);
    const version = await policyVersion(queueOnly, setup.policyId);
    const coalesced = await jobsOf(queueOnly, who, setup.childId);
    expect(coalesced).toHaveLength(1);
    expect(coalesced[0]).toMatchObject({
      trigger_type: 'policy_change',
      status: 'pending',
      policy_version: version,
    });

    const enforce = async () =>
      (
        await queueOnly.app.inject({
          method: 'POST',
          url: `/api/v1/children/${setup.childId}/enforce`,
          headers: who,
        })
      ).json() as Job;
    const crashed = await enforce();
    const done = await enforce();
    const db = database.handle.db;
    // A run killed midway left its job running with a partial result; another run's job
    // was finished and committed before its worker died.
    const stale = [
      {
        platform_id: 'nextdns',
        connection_id: crypto.randomUUID(),
        status: 'failed',
        rules_applied: 0,
        rules_skipped: 0,
        rules_failed: 99,
        error_message: 'half-done',
      },
    ];
    await db
      .updateTable('enforcement_jobs')
      .set({ status: 'running', started_at: new Date(0), results: JSON.stringify(stale) })
      .where('id', '=', crashed.id)
      .execute();
    const finishedAt = new Date('2026-01-01T00:00:00.000Z');
    await db
      .updateTable('enforcement_jobs')
      .set({ status: 'completed', started_at: finishedAt, completed_at: finishedAt })
      .where('id', '=', done.id)
      .execute();
    await queueOnly.app.close();

    const workers = await buildTestApp({ database, clock: queueOnly.clock });
    try {
      await eventually(async () => {
        const rows = await db
          .selectFrom('enforcement_jobs')
          .select('status')
          .where('status', 'in', ['pending', 'running'])
          .execute();
        return rows.length === 0;
      }, 'every queued job to be worked off');
      const read = async (id: string): Promise<Job & Record<string, unknown>> =>
        (await workers.app.inject({ url: `/api/v1/enforcement/jobs/${id}`, headers: who })).json();
      const restarted = await read(crashed.id);
      expect(restarted.status).toBe('completed');
      expect(restarted.started_at).toBe(queueOnly.clock.now().toISOString());
      expect(restarted.results.map((r) => [r.platform_id, r.status]).sort()).toEqual([
        ['nextdns', 'success'],
        ['xbox', 'success'],
      ]);
      expect(await read(done.id)).toMatchObject({
        status: 'completed',
        completed_at: finishedAt.toISOString(),
        results: [],
      });
      expect(await read(coalesced[0]?.id as string)).toMatchObject({
        status: 'completed',
        policy_version: version,
      });
    } finally {
      await workers.app.close();
      await database.drop();
    }
  });
});

describe('enforcement in production', () => {
  const jwks = new JwksServer();
  const ISS = 'https://id.example.test/';
  let t: TestApp;
  let owner: Session;

  beforeAll(async () => {
    await jwks.start();
    const key = await newSigningKey('prod-enforcement');
    jwks.keys.push(key.jwk);
    t = await buildTestApp({ env: productionEnv({ jwksUrl: jwks.url, issuer: ISS }) });
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    const token = await signSession(key, { iss: ISS, sub: 'prod-parent', iat, exp: iat + 3600 });
    owner = { token, userId: '', auth: { authorization: `Bearer ${token}` } };
  });
  afterAll(async () => {
    await t.close();
    await jwks.stop();
  });

  it('has no failure switch', async () => {
    for (const prefix of ['/api/v1', '/api/v1/developer']) {
      for (const method of ['POST', 'DELETE'] as const) {
        const res = await t.app.inject({
          method,
          url: `${prefix}/sandbox/platforms/nextdns/fail?family_id=${crypto.randomUUID()}`,
          headers: owner.auth,
          ...(method === 'POST' ? { payload: { family_id: crypto.randomUUID() } } : {}),
        });
        expect(res.statusCode).toBe(404);
        expect(res.json().message).toBe('route not found');
      }
    }
  });

  it('enforces devices through the agent and reports platforms without a live adapter as unsupported', async () => {
    const setup = await quickSetup(t, owner.auth);
    expect((await connect(t, owner.auth, setup.familyId, 'apple')).status).toBe('connected');
    // Needs OAuth credentials it was not given: stays pending.
    expect((await connect(t, owner.auth, setup.familyId, 'android')).status).toBe('pending');
    // Xbox has no live adapter (NextDNS and Control D do: live-enforcement.test.ts).
    await connect(t, owner.auth, setup.familyId, 'xbox');
    const queued = await t.app.inject({
      method: 'POST',
      url: `/api/v1/children/${setup.childId}/enforce`,
      headers: owner.auth,
    });
    expect(queued.statusCode).toBe(202);
    let job: Job | undefined;
    await eventually(async () => {
      job = (
        await t.app.inject({
          url: `/api/v1/enforcement/jobs/${queued.json().id}`,
          headers: owner.auth,
        })
      ).json();
      return job?.status !== 'pending' && job?.status !== 'running';
    }, 'the production job to finish');
    expect(job?.status).toBe('partial');
    const byPlatform = new Map(job?.results.map((r) => [r.platform_id, r]));

    const apple = (
      await t.app.inject({ url: '/api/v1/platforms/apple', headers: owner.auth })
    ).json() as { capabilities: string[] };
    const registry: Array<{ category: string; capabilities: string[]; engagement: boolean }> = (
      await t.app.inject({ url: '/api/v1/rules/categories' })
    ).json();
    // Devices get the compiled policy, which leaves engagement categories out.
    const applied = setup.enabled.filter((category) => {
      const entry = registry.find((e) => e.category === category);
      return (
        entry !== undefined &&
        !entry.engagement &&
        entry.capabilities.some((c) => apple.capabilities.includes(c))
      );
    }).length;
    expect(applied).toBeGreaterThan(0);
    expect(byPlatform.get('apple')).toMatchObject({
      status: 'success',
      rules_applied: applied,
      rules_skipped: setup.enabled.length - applied,
      rules_failed: 0,
    });
    expect(byPlatform.get('android')).toMatchObject({ status: 'failed', rules_applied: 0 });
    expect(byPlatform.get('android')?.error_message).toContain('pending');
    expect(byPlatform.get('xbox')).toMatchObject({
      status: 'unsupported',
      error_message: 'no live adapter for xbox in this deployment',
    });
  });
});
