// CONTRACT.md §11.1 and §11.3: a child's age rules follow its birthdays on the family's clock
// (a sandbox test clock here), custom rules never move, 29 February counts on 1 March in
// common years, and coming of age pauses what protected the child.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { longSession, type Session } from '../../../test/identity.js';
import { storedData } from '../../../test/stored-messages.js';

interface Rule {
  category: string;
  enabled: boolean;
  config: Record<string, unknown>;
  origin: string;
}

describe('birthdays on a test clock', () => {
  let t: TestApp;
  let owner: Session;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await longSession(t);
  });
  afterAll(async () => {
    await t.close();
  });

  async function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown) {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: owner.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  }

  async function until(done: () => Promise<boolean>, message: string) {
    const deadline = Date.now() + 20_000;
    while (!(await done())) {
      expect(Date.now(), message).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Advances the clock and waits (with a deadline) until every due effect ran. */
  async function advance(clockId: string, frozenTime: string) {
    const moved = await call('POST', `/sandbox/test-clocks/${clockId}/advance`, {
      frozen_time: frozenTime,
    });
    expect(moved).toMatchObject({ frozen_time: new Date(frozenTime).toISOString() });
    // Polled in the database: the API's rate limit is not what this waits on.
    await until(async () => {
      const row = await t.database.handle.db
        .selectFrom('test_clocks')
        .select('status')
        .where('id', '=', clockId)
        .executeTakeFirstOrThrow();
      return row.status === 'ready';
    }, 'the clock never became ready');
    return call('GET', `/sandbox/test-clocks/${clockId}`);
  }

  const messages = (familyId: string, type: string) =>
    storedData(t.database.handle.db, familyId, type);

  async function setUp(name: string, birthDate: string, frozenTime: string) {
    const clock = await call('POST', '/sandbox/test-clocks', {
      frozen_time: frozenTime,
      name: `${name}'s year`,
    });
    expect(clock).toMatchObject({ status: 'ready', name: `${name}'s year` });
    const setup = await call('POST', '/setup/quick', {
      child_name: name,
      birth_date: birthDate,
      test_clock_id: clock.id,
    });
    await call('POST', '/webhooks', {
      family_id: setup.family.id,
      url: 'https://hooks.example.com/haven',
      events: ['*'],
    });
    await call('POST', `/families/${setup.family.id}/connections`, { platform_id: 'nextdns' });
    return {
      clockId: clock.id as string,
      familyId: setup.family.id as string,
      childId: setup.child.id as string,
      policyId: setup.policy.id as string,
    };
  }

  const byCategory = (rules: Rule[]) => new Map(rules.map((rule) => [rule.category, rule]));

  it('a birthday re-derives the age rules once, keeps custom rules, enforces and announces', async () => {
    const { clockId, familyId, childId, policyId } = await setUp(
      'Ada',
      '2014-03-10',
      '2026-03-01T09:00:00Z',
    );
    const family = await call('GET', `/families/${familyId}`);
    expect(family.test_clock_id).toBe(clockId);
    // Made on the clock: the family's and the child's rows carry the clock's time.
    expect(family.created_at).toBe('2026-03-01T09:00:00.000Z');
    expect(await call('GET', `/children/${childId}`)).toMatchObject({
      age: 11,
      age_group: 'preteen',
      effective_age: 11,
      age_conflict: false,
      next_age_change_on: '2026-03-10',
      created_at: '2026-03-01T09:00:00.000Z',
    });
    // A person's choice: 75 minutes a day.
    await call('PUT', `/policies/${policyId}/rules/time_daily_limit`, {
      enabled: true,
      config: { daily_minutes: 75 },
    });
    const before = await call('GET', `/policies/${policyId}`);

    // The 12th birthday changes nothing generation gives at 11 → 12.
    await advance(clockId, '2026-03-11T00:00:00Z');
    const at12 = await call('GET', `/children/${childId}`);
    expect(at12).toMatchObject({ age: 12, next_age_change_on: '2027-03-10' });
    expect((await call('GET', `/policies/${policyId}`)).version).toBe(before.version);

    // The 13th: a teen's rules, in one new version.
    await advance(clockId, '2027-03-10T08:00:00Z');
    expect(await call('GET', `/children/${childId}`)).toMatchObject({
      age: 13,
      age_group: 'teen',
      next_age_change_on: '2028-03-10',
    });
    const after = await call('GET', `/policies/${policyId}`);
    expect(after.version).toBe(before.version + 1);
    expect(after.status).toBe('active');
    const rules = byCategory(await call('GET', `/policies/${policyId}/rules`));
    expect(rules.get('time_daily_limit')).toMatchObject({
      origin: 'custom',
      config: { daily_minutes: 75 },
    });
    expect(rules.get('social_chat_control')).toMatchObject({
      origin: 'age',
      enabled: false,
      config: { mode: 'everyone' },
    });
    expect(rules.get('dm_restriction')).toMatchObject({ config: { mode: 'contacts_only' } });

    const changed = await messages(familyId, 'child.age_changed');
    expect(changed).toHaveLength(2);
    expect(changed[1]).toMatchObject({
      child_id: childId,
      age: 13,
      age_group: 'teen',
      previous_age_group: 'preteen',
      policies: [{ policy_id: policyId, version: after.version }],
    });
    const [announced] = (changed[1]?.policies ?? []) as Array<{ changed_categories: string[] }>;
    const categories = announced?.changed_categories;
    expect(categories).toContain('social_chat_control');
    expect(categories).not.toContain('time_daily_limit');
    // The 12th birthday changed no rule: announced with no policy.
    expect(changed[0]).toMatchObject({ age: 12, age_group: 'preteen', policies: [] });

    const jobs = await call('GET', `/children/${childId}/enforcement/jobs`);
    expect(
      jobs.filter((job: { trigger_type: string }) => job.trigger_type === 'age_change'),
    ).toEqual([expect.objectContaining({ policy_version: after.version })]);
  });

  it('a 29 February birthday counts on 1 March in a common year', async () => {
    const { clockId, childId } = await setUp('Leap', '2012-02-29', '2027-02-20T12:00:00Z');
    expect(await call('GET', `/children/${childId}`)).toMatchObject({
      age: 14,
      next_age_change_on: '2027-03-01',
    });
    await advance(clockId, '2027-02-28T23:59:00Z');
    expect(await call('GET', `/children/${childId}`)).toMatchObject({ age: 14 });
    await advance(clockId, '2027-03-01T00:00:00Z');
    expect(await call('GET', `/children/${childId}`)).toMatchObject({
      age: 15,
      next_age_change_on: '2028-02-29',
    });
  });

  it('coming of age pauses the active policies and announces it', async () => {
    const { clockId, familyId, childId, policyId } = await setUp(
      'Max',
      '2008-06-01',
      '2026-05-30T12:00:00Z',
    );
    await advance(clockId, '2026-06-02T00:00:00Z');
    const policy = await call('GET', `/policies/${policyId}`);
    expect(policy).toMatchObject({ status: 'paused', paused_reason: 'came_of_age' });
    expect(await messages(familyId, 'child.came_of_age')).toEqual([{ child_id: childId, age: 18 }]);
    expect(await messages(familyId, 'child.age_changed')).toEqual([
      expect.objectContaining({ child_id: childId, age: 18, age_group: 'young_adult' }),
    ]);
    // Released from its platforms: one release job, and no age_change run for a paused policy.
    const jobs = await call('GET', `/children/${childId}/enforcement/jobs`);
    expect(jobs.map((job: { trigger_type: string }) => job.trigger_type)).toEqual(['release']);
    // The child and its history stay.
    expect(await call('GET', `/children/${childId}`)).toMatchObject({ age: 18 });
    // A person may turn protection back on: the reason goes with the pause.
    const resumed = await call('POST', `/policies/${policyId}/activate`);
    expect(resumed).toMatchObject({ status: 'active', paused_reason: null });
  });

  it('catches up every birthday a long advance passes, in order', async () => {
    const { clockId, familyId, childId } = await setUp('Cat', '2015-01-10', '2026-01-01T00:00:00Z');
    await advance(clockId, '2027-12-31T00:00:00Z');
    const ages = (await messages(familyId, 'child.age_changed')).map((data) => data.age);
    expect(ages).toEqual([11, 12]);
    expect(await call('GET', `/children/${childId}`)).toMatchObject({ age: 12 });
  });

  it('moving a family onto a clock applies the age of the clock at once', async () => {
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Mo',
      birth_date: '2012-04-04',
    });
    expect(setup.age_group).toBe('teen');
    const clock = await call('POST', '/sandbox/test-clocks', {
      frozen_time: '2031-01-01T00:00:00Z',
    });
    const moved = await call('PATCH', `/families/${setup.family.id}`, { test_clock_id: clock.id });
    expect(moved.test_clock_id).toBe(clock.id);
    await until(async () => {
      const policy = await t.database.handle.db
        .selectFrom('policies')
        .select(['status', 'paused_reason'])
        .where('id', '=', setup.policy.id)
        .executeTakeFirstOrThrow();
      return policy.status === 'paused' && policy.paused_reason === 'came_of_age';
    }, 'the policy was never paused');
    expect(await call('GET', `/children/${setup.child.id}`)).toMatchObject({ age: 18 });
  });
});

describe('birthdays on the real clock', () => {
  let t: TestApp;
  let owner: Session;
  beforeAll(async () => {
    t = await buildTestApp({
      clock: new TestClock('2026-05-03T12:00:00Z'),
      tuning: { ageRunPeriodMs: 10 },
    });
    owner = await longSession(t);
  });
  afterAll(async () => {
    await t.close();
  });

  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: owner.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  }

  /** The policy's version once the daily run moved it past `from` (polled in the database). */
  async function versionAfter(policyId: string, from: number) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const row = await t.database.handle.db
        .selectFrom('policies')
        .select('version')
        .where('id', '=', policyId)
        .executeTakeFirstOrThrow();
      if (row.version > from) {
        return row.version;
      }
      expect(Date.now(), 'the daily run never applied the birthday').toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('applies a birthday missed for days once, and a corrected birth date at the next run', async () => {
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Ren',
      birth_date: '2013-05-05',
    });
    expect(setup.age_group).toBe('preteen');
    const version = (await call('GET', `/policies/${setup.policy.id}`)).version;

    // The service was "down" over the birthday: the next run catches it up.
    t.clock.set('2026-05-09T08:00:00Z');
    const applied = await versionAfter(setup.policy.id, version);
    expect(applied).toBe(version + 1);
    expect(await call('GET', `/children/${setup.child.id}`)).toMatchObject({
      age: 13,
      age_group: 'teen',
      next_age_change_on: '2027-05-05',
    });
    const rules = await call('GET', `/policies/${setup.policy.id}/rules`);
    expect(rules.find((rule: Rule) => rule.category === 'age_gate')).toMatchObject({
      enabled: false,
    });

    // A parent corrects the birth date: the child is 10, and the rules follow.
    await call('PATCH', `/children/${setup.child.id}`, { birth_date: '2016-01-01' });
    expect(await versionAfter(setup.policy.id, applied)).toBe(applied + 1);
    const child = await call('GET', `/children/${setup.child.id}`);
    expect(child).toMatchObject({
      age: 10,
      age_group: 'preteen',
      next_age_change_on: '2027-01-01',
    });
    const again = await call('GET', `/policies/${setup.policy.id}/rules`);
    expect(again.find((rule: Rule) => rule.category === 'age_gate')).toMatchObject({
      enabled: true,
    });
  });
});
