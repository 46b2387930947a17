// CONTRACT.md §11.1: every rule says who wrote it (`origin`: `age` from generation, `custom`
// from a person or key) and a policy says the strictness it was last generated with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { longSession, type Session } from '../../../test/identity.js';
import { storedMessages } from '../../../test/stored-messages.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';

interface Rule {
  category: string;
  enabled: boolean;
  config: Record<string, unknown>;
  origin: string;
}

describe('rule origin and policy strictness', () => {
  let t: TestApp;
  let owner: Session;
  const receiver = new WebhookReceiver();
  beforeAll(async () => {
    await receiver.start();
    t = await buildTestApp();
    owner = await longSession(t);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: owner.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const origins = (rules: Rule[]) =>
    Object.fromEntries(rules.map((rule) => [rule.category, rule.origin]));
  const allAge = (rules: Rule[]) => {
    expect(rules).toHaveLength(20);
    return rules.every((rule) => rule.origin === 'age');
  };

  /** Each policy.* message stored for the family's webhook, oldest first. */
  async function policyEvents(familyId: string) {
    const stored = await storedMessages(t.database.handle.db, familyId);
    return stored.filter((message) => message.type.startsWith('policy.'));
  }

  it('quick setup writes age rules and a recommended policy (strict when asked)', async () => {
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Ada',
      birth_date: '2015-05-05',
    });
    expect(allAge(setup.rules)).toBe(true);
    expect(setup.policy.strictness).toBe('recommended');
    expect(await call('GET', `/policies/${setup.policy.id}`)).toMatchObject({
      strictness: 'recommended',
    });
    expect(allAge(await call('GET', `/policies/${setup.policy.id}/rules`))).toBe(true);

    const strict = await call('POST', '/setup/quick', {
      child_name: 'Bo',
      birth_date: '2012-01-01',
      strictness: 'strict',
      family_id: setup.family.id,
    });
    expect(allAge(strict.rules)).toBe(true);
    expect(strict.policy.strictness).toBe('strict');
    const listed = await call('GET', `/children/${strict.child.id}/policies`);
    expect(listed.map((p: { strictness: string }) => p.strictness)).toEqual(['strict']);
  });

  it('a rule a person writes becomes custom; the others stay age', async () => {
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Cy',
      birth_date: '2016-02-02',
    });
    const policyId = setup.policy.id;
    const one = await call('PUT', `/policies/${policyId}/rules/time_daily_limit`, {
      enabled: true,
      config: { daily_minutes: 75 },
    });
    expect(one).toMatchObject({ category: 'time_daily_limit', origin: 'custom' });
    const rules: Rule[] = await call('GET', `/policies/${policyId}/rules`);
    const expected = Object.fromEntries(
      rules.map((rule) => [rule.category, rule.category === 'time_daily_limit' ? 'custom' : 'age']),
    );
    expect(origins(rules)).toEqual(expected);
    // Writing a rule does not change the strictness it was generated with.
    expect(await call('GET', `/policies/${policyId}`)).toMatchObject({
      strictness: 'recommended',
    });

    // Even a rule written back with the generated value is the person's now.
    const same = rules.find((rule) => rule.category === 'web_safesearch');
    const bulk: Rule[] = await call('PUT', `/policies/${policyId}/rules`, {
      rules: [
        { category: 'web_safesearch', enabled: same?.enabled, config: same?.config },
        { category: 'infinite_scroll_block', enabled: true, config: { enabled: true } },
      ],
    });
    const after = origins(bulk);
    expect(after.web_safesearch).toBe('custom');
    expect(after.infinite_scroll_block).toBe('custom');
    expect(after.time_daily_limit).toBe('custom');
    expect(after.content_rating).toBe('age');
    expect(Object.values(after).filter((origin) => origin === 'custom')).toHaveLength(3);
  });

  it('generate-from-age writes age rules and sets the strictness, announced on the policy', async () => {
    const family = await call('POST', '/families', { name: 'Gen' });
    await call('POST', '/webhooks', { family_id: family.id, url: receiver.url, events: ['*'] });
    const child = await call('POST', `/families/${family.id}/children`, {
      name: 'Dee',
      birth_date: '2013-07-07',
    });
    const policy = await call('POST', `/children/${child.id}/policies`, { name: 'Own' });
    expect(policy.strictness).toBeNull();
    const custom: Rule[] = await call('PUT', `/policies/${policy.id}/rules`, {
      rules: [{ category: 'web_filter_level', enabled: true, config: { level: 'strict' } }],
    });
    expect(origins(custom)).toEqual({ web_filter_level: 'custom' });
    expect((await call('GET', `/policies/${policy.id}`)).strictness).toBeNull();

    // Generation rewrites every one of the 20, the person's too: all age afterwards.
    const relaxed: Rule[] = await call('POST', `/policies/${policy.id}/generate-from-age`, {
      strictness: 'relaxed',
    });
    expect(allAge(relaxed)).toBe(true);
    expect(await call('GET', `/policies/${policy.id}`)).toMatchObject({
      strictness: 'relaxed',
      version: 3,
    });
    // No body: recommended.
    const recommended: Rule[] = await call('POST', `/policies/${policy.id}/generate-from-age`);
    expect(allAge(recommended)).toBe(true);
    const got = await call('GET', `/policies/${policy.id}`);
    expect(got).toMatchObject({ strictness: 'recommended', version: 4 });

    // The Policy resource as the API shows it, in each event.
    const events = await policyEvents(family.id);
    expect(events.map((e) => [e.type, e.data.strictness])).toEqual([
      ['policy.created', null],
      ['policy.updated', null],
      ['policy.updated', 'relaxed'],
      ['policy.updated', 'recommended'],
    ]);
    expect(events.at(-1)?.data).toEqual(got);
  });
});
