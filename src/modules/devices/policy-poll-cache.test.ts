// docs/decisions.md "The device poll from memory": once a device's key and its child's policy
// in force are known, "unchanged" and a repeated compiled policy cost no database statement; every
// change of the policy in force (rules, status, deletion of the child or the family) is seen
// by the very next poll.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../../test/database.js';
import {
  type ChildSetup,
  deviceAgent,
  expectEnvelope,
  quickSetup,
  registerDevice,
  sandbox,
} from '../../../test/devices.js';
import { type StatementRecorder, statementRecorder } from '../../../test/statements.js';
import { RULE_REGISTRY } from '../rules/registry.js';

describe('device policy poll from memory', () => {
  let database: TestDatabase;
  let recorder: StatementRecorder;
  let t: TestApp;
  let agent: ReturnType<typeof deviceAgent>;
  const parent = sandbox('poll-cache-parent');
  let setup: ChildSetup;

  const write = async (
    method: 'PUT' | 'PATCH' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
  ) => {
    const res = await t.app.inject({ method, url, headers: parent, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res;
  };
  /** A poll, and the statements it ran. */
  const poll = (key: string, headers: Record<string, string> = {}, query = '') =>
    recorder.during((tag) => agent.policy(key, { ...headers, ...tag }, query));
  const ruleConfig = (category: string) =>
    RULE_REGISTRY.find((rule) => rule.category === category)?.default_config as object;

  beforeAll(async () => {
    recorder = statementRecorder();
    database = await createTestDatabase({ onStatement: recorder.onStatement });
    t = await buildTestApp({
      database,
      plugins: [recorder.plugin],
    });
    agent = deviceAgent(t);
    setup = await quickSetup(t, parent);
  });
  afterAll(async () => {
    await t.close();
    await database.drop();
  });

  it('answers 304 and a repeated 200 without a database statement', async () => {
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    // The first poll reads: the key, the version in force, the rules.
    const first = await poll(key);
    expect(first.result.statusCode).toBe(200);
    expect(first.statements.length).toBeGreaterThan(0);
    const { version } = first.result.json();
    const etag = first.result.headers.etag as string;

    const byTag = await poll(key, { 'if-none-match': `W/"x", ${etag}` });
    expect(byTag.result.statusCode).toBe(304);
    expect(byTag.result.headers.etag).toBe(etag);
    expect(byTag.statements).toEqual([]);
    const byVersion = await poll(key, {}, `?since_version=${version}`);
    expect(byVersion.result.statusCode).toBe(304);
    expect(byVersion.statements).toEqual([]);

    // A second device of the same child: its key is read, the policy is not.
    const { device_key: second } = await registerDevice(t, parent, setup.childId);
    const other = await poll(second, {}, `?since_version=${version}`);
    expect(other.result.statusCode).toBe(304);
    expect(other.statements).toHaveLength(1);
    expect(other.statements[0]).toMatch(/^select /);

    // The compiled body comes from memory too, stamped with the time of this answer.
    t.clock.advance(90_000);
    const again = await poll(second);
    expect(again.result.statusCode).toBe(200);
    expect(again.result.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(again.result.headers.etag).toBe(etag);
    expect(again.result.json()).toEqual({
      ...first.result.json(),
      generated_at: t.clock.now().toISOString(),
    });
    // 90 s on, the key and version entries have expired (their TTL bounds staleness): one
    // look at each, but the body of that version is still the compiled one.
    expect(again.statements).toHaveLength(2);
    expect(again.statements.every((sql) => sql.startsWith('select '))).toBe(true);
    const cached = await poll(second);
    expect(cached.result.body).toBe(again.result.body);
    expect(cached.statements).toEqual([]);
  });

  it('serves the new rules at once after a rule edit, then from memory again', async () => {
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    const before = await agent.policy(key);
    expect(before.statusCode).toBe(200);
    const oldTag = before.headers.etag as string;
    expect((await agent.policy(key, { 'if-none-match': oldTag })).statusCode).toBe(304);

    await write('PUT', `/api/v1/policies/${setup.policyId}/rules/time_daily_limit`, {
      enabled: true,
      config: { ...ruleConfig('time_daily_limit'), daily_minutes: 17 },
    });
    const after = await agent.policy(key, { 'if-none-match': oldTag });
    expect(after.statusCode).toBe(200);
    const body = after.json();
    expect(body.version).toBe(before.json().version + 1);
    expect(after.headers.etag).toBe(`"${setup.policyId}.${body.version}"`);
    const limit = body.rules.find((r: { category: string }) => r.category === 'time_daily_limit');
    expect(limit.config.daily_minutes).toBe(17);

    // Disabling a rule takes it out of the compiled body.
    await write('PUT', `/api/v1/policies/${setup.policyId}/rules/time_daily_limit`, {
      enabled: false,
      config: ruleConfig('time_daily_limit'),
    });
    const disabled = await agent.policy(key, {}, `?since_version=${body.version}`);
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json().version).toBe(body.version + 1);
    const categories = disabled.json().rules.map((r: { category: string }) => r.category);
    expect(categories).not.toContain('time_daily_limit');

    const repeat = await poll(key);
    expect(repeat.result.json().rules).toEqual(disabled.json().rules);
    expect(repeat.statements).toEqual([]);

    // Deleting the rule raises the version once more, seen by the next poll.
    await write('DELETE', `/api/v1/policies/${setup.policyId}/rules/time_daily_limit`);
    const deleted = await agent.policy(key, {}, `?since_version=${body.version + 1}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().version).toBe(body.version + 2);
  });

  it('follows the policy in force through pause, a new policy, activation and deletion', async () => {
    const child = await quickSetup(t, parent, 'Ada');
    const { device_key: key } = await registerDevice(t, parent, child.childId);
    const v = (await agent.policy(key)).json().version;
    expect((await agent.policy(key, {}, `?since_version=${v}`)).statusCode).toBe(304);

    // Paused: no policy in force (not remembered: an activation must be seen at once).
    await write('POST', `/api/v1/policies/${child.policyId}/pause`);
    expectEnvelope(await agent.policy(key, {}, `?since_version=${v}`), 404, 'policy not found');
    const created = await write('POST', `/api/v1/children/${child.childId}/policies`, {
      name: 'Holidays',
      priority: 5,
    });
    const holidays = created.json().id as string;
    expectEnvelope(await agent.policy(key), 404, 'policy not found');
    await write('POST', `/api/v1/policies/${holidays}/activate`);
    const active = await agent.policy(key);
    expect(active.statusCode).toBe(200);
    expect(active.json()).toMatchObject({ policy_id: holidays, rules: [] });

    // The first policy comes back, but the new one outranks it until its priority drops.
    await write('POST', `/api/v1/policies/${child.policyId}/activate`);
    const tag = active.headers.etag as string;
    expect((await agent.policy(key, { 'if-none-match': tag })).statusCode).toBe(304);
    await write('PATCH', `/api/v1/policies/${holidays}`, { priority: -1 });
    const handedBack = await agent.policy(key, { 'if-none-match': tag });
    expect(handedBack.statusCode).toBe(200);
    expect(handedBack.json().policy_id).toBe(child.policyId);

    // Deleting the policy in force hands over to the other active one.
    await write('DELETE', `/api/v1/policies/${child.policyId}`);
    const rest = await agent.policy(key, { 'if-none-match': handedBack.headers.etag as string });
    expect(rest.statusCode).toBe(200);
    expect(rest.json().policy_id).toBe(holidays);
  });

  it('refuses a device whose family was deleted at once, while its version is remembered', async () => {
    const owner = sandbox('poll-cache-owner');
    const family = await quickSetup(t, owner, 'Ben');
    const { device_key: key } = await registerDevice(t, owner, family.childId);
    const v = (await agent.policy(key)).json().version;
    expect((await agent.policy(key, {}, `?since_version=${v}`)).statusCode).toBe(304);
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/families/${family.familyId}`,
      headers: owner,
    });
    expect(removed.statusCode).toBe(204);
    const refused = await agent.policy(key, {}, `?since_version=${v}`);
    expectEnvelope(refused, 401, 'invalid or revoked device key');
  });

  it('sees a quick-setup repair of the policy (a raised version) at once', async () => {
    const again = sandbox('poll-cache-repair');
    const first = await quickSetup(t, again, 'Cleo');
    const { device_key: key } = await registerDevice(t, again, first.childId);
    const before = await agent.policy(key);
    const v = before.json().version;
    // Remove a rule, then let the same quick setup put it back: one raised version each.
    await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/policies/${first.policyId}/rules/time_daily_limit`,
      headers: again,
    });
    expect((await agent.policy(key, {}, `?since_version=${v}`)).json().version).toBe(v + 1);
    const repaired = await t.app.inject({
      method: 'POST',
      url: '/api/v1/setup/quick',
      headers: again,
      payload: { child_name: 'Cleo', birth_date: '2016-05-01', family_id: first.familyId },
    });
    expect(repaired.statusCode, repaired.body).toBeLessThan(300);
    const after = await agent.policy(key, {}, `?since_version=${v + 1}`);
    expect(after.statusCode).toBe(200);
    expect(after.json().version).toBe(v + 2);
    expect(after.json().rules).toEqual(before.json().rules);
  });
});
