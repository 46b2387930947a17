import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { longSession, type Session } from '../../../test/identity.js';

describe('policies and rules', () => {
  let t: TestApp;
  let owner: Session;
  let stranger: Session;
  let childId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await longSession(t);
    stranger = await longSession(t);
    const family = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/families',
        headers: owner.auth,
        payload: { name: 'P' },
      })
    ).json();
    childId = (
      await t.app.inject({
        method: 'POST',
        url: `/api/v1/families/${family.id}/children`,
        headers: owner.auth,
        payload: { name: 'Mia', birth_date: '2014-03-01' },
      })
    ).json().id;
  });
  afterAll(async () => t.close());

  const as = (
    who: Session,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
  ) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: who.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  it('walks draft -> active <-> paused, raising the version on every change', async () => {
    const created = await as(owner, 'POST', `/children/${childId}/policies`, {
      name: 'School nights',
    });
    expect(created.statusCode).toBe(201);
    const policy = created.json();
    expect(policy).toMatchObject({
      child_id: childId,
      name: 'School nights',
      status: 'draft',
      priority: 0,
      version: 1,
    });
    const activated = (await as(owner, 'POST', `/policies/${policy.id}/activate`)).json();
    expect(activated).toMatchObject({ status: 'active', version: 2 });
    const paused = (await as(owner, 'POST', `/policies/${policy.id}/pause`)).json();
    expect(paused).toMatchObject({ status: 'paused', version: 3 });
    const renamed = (
      await as(owner, 'PATCH', `/policies/${policy.id}`, { name: 'Weeknights', priority: 5 })
    ).json();
    expect(renamed).toMatchObject({ name: 'Weeknights', priority: 5, version: 4 });
    expect(
      (await as(owner, 'GET', `/children/${childId}/policies`))
        .json()
        .map((p: { id: string }) => p.id),
    ).toContain(policy.id);
    expect((await as(stranger, 'GET', `/policies/${policy.id}`)).statusCode).toBe(403);
    expect(
      (await as(owner, 'GET', '/policies/00000000-0000-4000-8000-000000000000')).json().message,
    ).toBe('policy not found');
  });

  it('validates rules against the registry, single and bulk (all or nothing)', async () => {
    const policy = (
      await as(owner, 'POST', `/children/${childId}/policies`, { name: 'Rules' })
    ).json();
    const put = (category: string, body: unknown) =>
      as(owner, 'PUT', `/policies/${policy.id}/rules/${category}`, body);

    const ok = await put('time_daily_limit', { enabled: true, config: { daily_minutes: 90 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      policy_id: policy.id,
      category: 'time_daily_limit',
      enabled: true,
      config: { daily_minutes: 90 },
    });
    const unknown = await put('mind_control', { enabled: true, config: {} });
    expect(unknown.json()).toMatchObject({
      code: 400,
      message: 'unknown rule_category: mind_control',
    });
    const tooLong = await put('time_daily_limit', {
      enabled: true,
      config: { daily_minutes: 5000 },
    });
    expect(tooLong.json()).toMatchObject({
      code: 400,
      message: 'config.daily_minutes must be <= 1440',
    });
    const wrongType = await put('web_filter_level', {
      enabled: true,
      config: { level: 'extreme' },
    });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().message).toMatch(/^config\.level /);

    const versionBefore = (await as(owner, 'GET', `/policies/${policy.id}`)).json().version;
    const bulkBad = await as(owner, 'PUT', `/policies/${policy.id}/rules`, {
      rules: [
        { category: 'web_safesearch', enabled: true, config: { enabled: true } },
        { category: 'time_daily_limit', enabled: true, config: { daily_minutes: -1 } },
      ],
    });
    expect(bulkBad.json()).toMatchObject({
      code: 400,
      message: 'rules[1].config.daily_minutes must be >= 0',
    });
    const afterBad = await as(owner, 'GET', `/policies/${policy.id}/rules`);
    expect(afterBad.json().map((r: { category: string }) => r.category)).toEqual([
      'time_daily_limit',
    ]);
    expect((await as(owner, 'GET', `/policies/${policy.id}`)).json().version).toBe(versionBefore);

    const bulk = await as(owner, 'PUT', `/policies/${policy.id}/rules`, {
      rules: [
        { category: 'web_safesearch', enabled: true, config: { enabled: true } },
        { category: 'time_daily_limit', enabled: false, config: { daily_minutes: 30 } },
      ],
    });
    expect(bulk.statusCode).toBe(200);
    expect(bulk.json()).toHaveLength(2);
    expect((await as(owner, 'GET', `/policies/${policy.id}`)).json().version).toBe(
      versionBefore + 1,
    );

    expect(
      (await as(owner, 'DELETE', `/policies/${policy.id}/rules/web_safesearch`)).statusCode,
    ).toBe(204);
    expect(
      (await as(owner, 'DELETE', `/policies/${policy.id}/rules/web_safesearch`)).statusCode,
    ).toBe(404);
    expect((await as(owner, 'DELETE', `/policies/${policy.id}/rules/nonsense`)).statusCode).toBe(
      400,
    );
    expect((await as(owner, 'GET', `/policies/${policy.id}`)).json().version).toBe(
      versionBefore + 2,
    );
  });

  it('generates the 20 age rules as one change, with strictness', async () => {
    t.clock.set('2026-06-01T00:00:00.000Z'); // Mia is 12: preteen
    const policy = (
      await as(owner, 'POST', `/children/${childId}/policies`, { name: 'Generated' })
    ).json();
    const generated = await as(owner, 'POST', `/policies/${policy.id}/generate-from-age`, {
      strictness: 'strict',
    });
    expect(generated.statusCode).toBe(200);
    const rules = generated.json() as Array<{ category: string; config: Record<string, unknown> }>;
    expect(rules).toHaveLength(20);
    expect(rules.find((r) => r.category === 'time_daily_limit')?.config).toEqual({
      daily_minutes: 84,
    });
    expect((await as(owner, 'GET', `/policies/${policy.id}`)).json().version).toBe(2);
    const again = await as(owner, 'POST', `/policies/${policy.id}/generate-from-age`);
    expect(again.json()).toHaveLength(20);
    expect((await as(owner, 'GET', `/policies/${policy.id}`)).json().version).toBe(3);
  });
});
