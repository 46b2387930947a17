// Release (CONTRACT.md §11.4) in the sandbox: taking a child's last active policy away (pause,
// delete) queues a `release` job that converges every connected platform to nothing and
// completes; the device policy is gone. Live partners: live-enforcement.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createTestDatabase } from '../../../test/database.js';
import { deviceAgent, quickSetup, registerDevice, sandbox } from '../../../test/devices.js';
import { eventually } from '../../../test/tcp-proxy.js';

interface Job {
  id: string;
  policy_id: string;
  policy_version: number;
  trigger_type: string;
  status: string;
  results: Array<{
    platform_id: string;
    status: string;
    rules_applied: number;
    rules_skipped: number;
    rules_failed: number;
    error_message: string | null;
  }>;
}

const who = sandbox('release');

async function call(t: TestApp, method: string, url: string, payload?: object) {
  const res = await t.app.inject({
    method: method as 'GET',
    url: `/api/v1${url}`,
    headers: who,
    ...(payload ? { payload } : {}),
  });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.body === '' ? undefined : res.json();
}

async function jobsOf(t: TestApp, childId: string): Promise<Job[]> {
  return call(t, 'GET', `/children/${childId}/enforcement/jobs`);
}

/** Every job of the child finished (bounded): the list, newest first. */
async function settled(t: TestApp, childId: string): Promise<Job[]> {
  let jobs: Job[] = [];
  await eventually(async () => {
    jobs = await jobsOf(t, childId);
    return jobs.every((job) => !['pending', 'running'].includes(job.status));
  }, "the child's jobs to finish");
  return jobs;
}

async function version(t: TestApp, policyId: string): Promise<number> {
  return (await call(t, 'GET', `/policies/${policyId}`)).version;
}

/** The release jobs among a child's (the test clock stands still: no order by creation). */
const releases = (jobs: Job[]) => jobs.filter((job) => job.trigger_type === 'release');

/** What a release leaves on each platform: success, and not one rule pushed. */
const NOTHING = { status: 'success', rules_applied: 0, rules_skipped: 0, rules_failed: 0 };

describe('release', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('pausing the last active policy releases every connected platform; the device policy is gone', async () => {
    const setup = await quickSetup(t, who);
    await call(t, 'POST', `/families/${setup.familyId}/connections`, { platform_id: 'xbox' });
    await call(t, 'POST', `/families/${setup.familyId}/connections`, { platform_id: 'apple' });
    const { device_key: key } = await registerDevice(t, who, setup.childId);
    const agent = deviceAgent(t);
    expect((await agent.policy(key)).statusCode).toBe(200);
    await call(t, 'POST', `/children/${setup.childId}/enforce`);
    const enforced = await settled(t, setup.childId);
    expect(enforced[0]?.results.some((r) => r.rules_applied > 0)).toBe(true);

    await call(t, 'POST', `/policies/${setup.policyId}/pause`);
    const [release, ...others] = releases(await jobsOf(t, setup.childId));
    expect(others).toEqual([]);
    expect(release).toMatchObject({
      policy_id: setup.policyId,
      policy_version: await version(t, setup.policyId),
    });
    expect(await jobsOf(t, setup.childId)).toHaveLength(2);
    const done = (await settled(t, setup.childId)).find((job) => job.id === release?.id);
    expect(done?.status).toBe('completed');
    expect(done?.results.map((r) => r.platform_id).sort()).toEqual(['apple', 'xbox']);
    for (const result of done?.results ?? []) {
      expect(result).toMatchObject({ ...NOTHING, error_message: null });
    }
    const gone = await agent.policy(key);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().message).toBe('policy not found');
  });

  it('releases on deleting the last active policy; not for a draft, and hands over to another active one', async () => {
    const setup = await quickSetup(t, who);
    await call(t, 'POST', `/families/${setup.familyId}/connections`, { platform_id: 'xbox' });
    const draft = await call(t, 'POST', `/children/${setup.childId}/policies`, { name: 'Draft' });
    await call(t, 'DELETE', `/policies/${draft.id}`);
    expect(await jobsOf(t, setup.childId)).toEqual([]);

    // Active, outranked by the policy in force: no job yet.
    const second = await call(t, 'POST', `/children/${setup.childId}/policies`, {
      name: 'Weekends',
      priority: -1,
    });
    await call(t, 'POST', `/policies/${second.id}/activate`);
    expect(await jobsOf(t, setup.childId)).toEqual([]);

    // The policy in force deleted: the other active one is pushed, nothing is released.
    await call(t, 'DELETE', `/policies/${setup.policyId}`);
    const [handOver, ...none] = await settled(t, setup.childId);
    expect(none).toEqual([]);
    expect(handOver).toMatchObject({
      trigger_type: 'policy_change',
      policy_id: second.id,
      status: 'completed',
    });

    // The last active policy deleted: the child is released, in the deleted policy's name.
    const last = await version(t, second.id);
    await call(t, 'DELETE', `/policies/${second.id}`);
    const [release, ...others] = releases(await settled(t, setup.childId));
    expect(others).toEqual([]);
    expect(release).toMatchObject({
      policy_id: second.id,
      policy_version: last,
      status: 'completed',
      results: [{ platform_id: 'xbox', ...NOTHING }],
    });
    expect(await jobsOf(t, setup.childId)).toHaveLength(2);
  });

  it('queues nothing for a family without connections', async () => {
    const setup = await quickSetup(t, who);
    await call(t, 'POST', `/policies/${setup.policyId}/pause`);
    await call(t, 'POST', `/policies/${setup.policyId}/activate`);
    await call(t, 'DELETE', `/policies/${setup.policyId}`);
    expect(await jobsOf(t, setup.childId)).toEqual([]);
  });
});

describe('a release queued before its worker runs', () => {
  it('takes over the pending automatic job, and enforces a policy active again by the time it runs', async () => {
    const database = await createTestDatabase();
    const queueOnly = await buildTestApp({ database, env: { WORKERS: 'off' } });
    const setup = await quickSetup(queueOnly, who);
    await call(queueOnly, 'POST', `/families/${setup.familyId}/connections`, {
      platform_id: 'xbox',
    });
    await call(queueOnly, 'PUT', `/policies/${setup.policyId}/rules/time_daily_limit`, {
      enabled: true,
      config: { daily_minutes: 45 },
    });
    const [pending] = await jobsOf(queueOnly, setup.childId);
    expect(pending).toMatchObject({ trigger_type: 'policy_change', status: 'pending' });

    // What the pending job would push is no longer in force: it becomes the release (one job,
    // not a policy_change bound to fail beside a release).
    await call(queueOnly, 'POST', `/policies/${setup.policyId}/pause`);
    const paused = await version(queueOnly, setup.policyId);
    expect(await jobsOf(queueOnly, setup.childId)).toEqual([
      expect.objectContaining({
        id: pending?.id,
        trigger_type: 'release',
        policy_version: paused,
        status: 'pending',
      }),
    ]);

    // Active again before any worker ran: the release converges to that policy.
    await call(queueOnly, 'POST', `/policies/${setup.policyId}/activate`);
    const active = await version(queueOnly, setup.policyId);
    await queueOnly.app.close();

    const workers = await buildTestApp({ database, clock: queueOnly.clock });
    try {
      const jobs = await settled(workers, setup.childId);
      expect(jobs.map((job) => job.trigger_type).sort()).toEqual(['policy_change', 'release']);
      const release = jobs.find((job) => job.trigger_type === 'release');
      const pushed = jobs.find((job) => job.trigger_type === 'policy_change');
      expect(release).toMatchObject({ status: 'completed', policy_version: active });
      expect(release?.results).toEqual(pushed?.results);
      expect(release?.results[0]?.rules_applied).toBeGreaterThan(0);
    } finally {
      await workers.app.close();
      await database.drop();
    }
  });
});
