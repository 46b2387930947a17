// CONTRACT.md §11.2: age signals. Each refused body names its field; the latest signal of
// each source counts (a late-arriving older observation does not override it); a signal
// that lowers the effective age re-derives the rules at once, as a birthday would, and one
// raising it back does the same; a range the birth date falls outside of is a conflict, not
// a change; every accepted signal is announced; the MCP tool records one as the REST route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createOrg, mintKey, newSession, type Session } from '../../../test/identity.js';
import { storedData } from '../../../test/stored-messages.js';

interface Rule {
  category: string;
  enabled: boolean;
  config: Record<string, unknown>;
  origin: string;
}

// The app's clock stands at 2026-01-15T12:00:00Z: a child born on 1 June 2011 is 14.
const BIRTH_DATE = '2011-06-01';

describe('age signals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  /** Requests as `session` (each test its own user: the rate limit is per user). */
  function as(session: Session) {
    return async (method: 'GET' | 'POST', url: string, payload?: unknown) =>
      t.app.inject({
        method,
        url: `/api/v1${url}`,
        headers: session.auth,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
  }

  async function setUp(session: Session, extra: Record<string, unknown> = {}) {
    const call = as(session);
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Ada',
      birth_date: BIRTH_DATE,
      ...extra,
    });
    expect(setup.statusCode, setup.body).toBe(201);
    const familyId = setup.json().family.id as string;
    const hook = await call('POST', '/webhooks', {
      family_id: familyId,
      url: 'https://hooks.example.com/haven',
      events: ['*'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    return {
      call,
      familyId,
      childId: setup.json().child.id as string,
      policyId: setup.json().policy.id as string,
    };
  }

  const messages = (familyId: string, type: string) =>
    storedData(t.database.handle.db, familyId, type);

  it('refuses each malformed signal with a message naming the field, recording nothing', async () => {
    const { call, childId } = await setUp(await newSession(t.app));
    const url = `/children/${childId}/age-signals`;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ source: 'myspace', age_upper: 12 }, 'unknown age signal source: myspace'],
      [{ source: '', age_upper: 12 }, 'unknown age signal source: '],
      [{ age_upper: 12 }, 'source is required'],
      [{ source: 7, age_upper: 12 }, 'source must be a string'],
      [{ source: 'parent_declared' }, 'age_lower or age_upper is required'],
      [
        { source: 'parent_declared', age_lower: null, age_upper: null },
        'age_lower or age_upper is required',
      ],
      [
        { source: 'parent_declared', age_lower: 121 },
        'age_lower must be an integer from 0 to 120, or null',
      ],
      [
        { source: 'parent_declared', age_lower: -1 },
        'age_lower must be an integer from 0 to 120, or null',
      ],
      [
        { source: 'parent_declared', age_lower: 9.5 },
        'age_lower must be an integer from 0 to 120, or null',
      ],
      [
        { source: 'parent_declared', age_lower: '9' },
        'age_lower must be an integer from 0 to 120, or null',
      ],
      [
        { source: 'parent_declared', age_upper: 500 },
        'age_upper must be an integer from 0 to 120, or null',
      ],
      [
        { source: 'parent_declared', age_lower: 13, age_upper: 12 },
        'age_lower must not be greater than age_upper',
      ],
      [
        { source: 'parent_declared', age_upper: 12, method: 'x'.repeat(65) },
        'method must be at most 64 characters',
      ],
      [{ source: 'parent_declared', age_upper: 12, method: '' }, 'method must not be empty'],
      [
        { source: 'parent_declared', age_upper: 12, observed_at: 'yesterday' },
        'observed_at must be a valid date-time',
      ],
      [
        // One second past the family's now.
        { source: 'parent_declared', age_upper: 12, observed_at: '2026-01-15T12:00:01Z' },
        'observed_at must not be in the future',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', url, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message, JSON.stringify(body)).toBe(message);
    }
    const list = await call('GET', url);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([]);
    // The bounds themselves are fine, and a method of 64 characters.
    const edge = await call('POST', url, {
      source: 'parent_declared',
      age_lower: 0,
      age_upper: 120,
      method: 'm'.repeat(64),
      observed_at: '2026-01-15T12:00:00Z',
    });
    expect(edge.statusCode, edge.body).toBe(201);
  });

  it('shows a child and its signals only to whoever sees its family', async () => {
    const owner = await newSession(t.app);
    const { call, childId } = await setUp(owner);
    const url = `/children/${childId}/age-signals`;
    const body = { source: 'parent_declared', age_upper: 12 };

    // A user outside the family: not a member (the house rule for sessions).
    const stranger = as(await newSession(t.app));
    for (const res of [await stranger('POST', url, body), await stranger('GET', url)]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('not a member of this family');
    }
    // A key of another org: the child does not exist for it.
    const developer = await newSession(t.app);
    const org = await createOrg(t.app, developer);
    const key = await mintKey(t.app, developer, org.id, {
      scopes: ['read:children', 'write:children'],
    });
    for (const method of ['POST', 'GET'] as const) {
      const res = await t.app.inject({
        method,
        url: `/api/v1${url}`,
        headers: { authorization: `Bearer ${key.key}` },
        ...(method === 'POST' ? { payload: body } : {}),
      });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().message).toBe('child not found');
    }
    // No such child.
    const missing = await call(
      'POST',
      '/children/00000000-0000-4000-8000-00000000dead/age-signals',
      body,
    );
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('child not found');
    expect((await call('GET', url)).json()).toEqual([]);
  });

  it('lists newest first; the latest observation of each source counts, whenever it arrives', async () => {
    const { call, childId, familyId } = await setUp(await newSession(t.app));
    const url = `/children/${childId}/age-signals`;
    const record = async (body: Record<string, unknown>) => {
      const res = await call('POST', url, body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json();
    };
    const apple = await record({
      source: 'apple_declared_age_range',
      age_lower: 13,
      age_upper: 15,
      method: 'guardianDeclared',
      observed_at: '2026-01-10T00:00:00Z',
    });
    expect(apple).toEqual({
      id: expect.any(String),
      child_id: childId,
      source: 'apple_declared_age_range',
      age_lower: 13,
      age_upper: 15,
      method: 'guardianDeclared',
      observed_at: '2026-01-10T00:00:00.000Z',
      created_at: '2026-01-15T12:00:00.000Z',
    });
    // Observed before the one already recorded: kept, but it does not count.
    const older = await record({
      source: 'apple_declared_age_range',
      age_upper: 9,
      observed_at: '2026-01-01T00:00:00Z',
    });
    expect(older).toMatchObject({ age_lower: null, age_upper: 9, method: null });
    // Observed now by default (the family's clock); another source counts beside Apple's.
    const google = await record({ source: 'google_play_age_signals', age_lower: 13 });
    expect(google).toMatchObject({ observed_at: '2026-01-15T12:00:00.000Z', age_upper: null });

    const listed = (await call('GET', url)).json() as Array<{ id: string }>;
    expect(listed.map((signal) => signal.id)).toEqual([google.id, apple.id, older.id]);
    // Apple's 13-15 counts, not the later-arriving 9: the child stays 14.
    expect((await call('GET', `/children/${childId}`)).json()).toMatchObject({
      age: 14,
      effective_age: 14,
      age_group: 'teen',
      age_conflict: false,
    });
    const stored = await t.database.handle.db
      .selectFrom('children')
      .select('counting_signals')
      .where('id', '=', childId)
      .executeTakeFirstOrThrow();
    expect(stored.counting_signals.map((signal) => signal.id)).toEqual([apple.id, google.id]);

    // Every accepted signal is announced, the one that does not count as well.
    const announced = await messages(familyId, 'child.age_signal');
    expect(announced.map((data) => (data.signal as { id: string }).id)).toEqual([
      apple.id,
      older.id,
      google.id,
    ]);
    expect(announced[1]).toEqual({
      child_id: childId,
      signal: { ...older, child_id: childId },
      effective_age: 14,
      age_conflict: false,
    });
    expect(await messages(familyId, 'child.age_changed')).toEqual([]);

    // Two sources at once: each write sees the other's (the child is locked), neither is lost.
    const [amazon, windows] = await Promise.all([
      record({ source: 'amazon_appstore', age_lower: 13, age_upper: 17 }),
      record({ source: 'windows_age_signals', age_lower: 12 }),
    ]);
    const after = await t.database.handle.db
      .selectFrom('children')
      .select('counting_signals')
      .where('id', '=', childId)
      .executeTakeFirstOrThrow();
    expect(after.counting_signals.map((signal) => signal.id)).toEqual([
      apple.id,
      google.id,
      amazon.id,
      windows.id,
    ]);
  });

  it('a signal lowering the effective age re-derives the rules at once; a later one raises it back', async () => {
    const { call, childId, familyId, policyId } = await setUp(await newSession(t.app));
    const connected = await call('POST', `/families/${familyId}/connections`, {
      platform_id: 'nextdns',
    });
    expect(connected.statusCode, connected.body).toBe(201);
    const url = `/children/${childId}/age-signals`;
    const before = (await call('GET', `/policies/${policyId}`)).json();
    const configs = async () =>
      Object.fromEntries(
        ((await call('GET', `/policies/${policyId}/rules`)).json() as Rule[]).map((rule) => [
          rule.category,
          { enabled: rule.enabled, config: rule.config, origin: rule.origin },
        ]),
      );
    const teenRules = await configs();

    const lowered = await call('POST', url, {
      source: 'apple_declared_age_range',
      age_lower: 9,
      age_upper: 12,
      method: 'guardianDeclared',
    });
    expect(lowered.statusCode, lowered.body).toBe(201);
    // Already applied when the answer comes: no run, no wait.
    expect((await call('GET', `/children/${childId}`)).json()).toMatchObject({
      age: 14,
      effective_age: 12,
      age_group: 'preteen',
      age_conflict: true,
    });
    const atTwelve = (await call('GET', `/policies/${policyId}`)).json();
    expect(atTwelve.version).toBe(before.version + 1);
    const changed = await messages(familyId, 'child.age_changed');
    expect(changed).toEqual([
      expect.objectContaining({
        child_id: childId,
        age: 14,
        effective_age: 12,
        age_group: 'preteen',
        previous_age_group: 'teen',
        policies: [expect.objectContaining({ policy_id: policyId, version: atTwelve.version })],
      }),
    ]);
    expect(await messages(familyId, 'child.age_signal')).toEqual([
      {
        child_id: childId,
        signal: lowered.json(),
        effective_age: 12,
        age_conflict: true,
      },
    ]);
    // The preteen rules differ, and reach the connected platform as a birthday's would.
    expect(await configs()).not.toEqual(teenRules);
    const jobs = (await call('GET', `/children/${childId}/enforcement/jobs`)).json() as Array<{
      trigger_type: string;
      policy_version: number;
    }>;
    expect(jobs.filter((job) => job.trigger_type === 'age_change')).toEqual([
      expect.objectContaining({ policy_version: atTwelve.version }),
    ]);

    // The same source, observed later, says 13-15: back to the birth-date age.
    const raised = await call('POST', url, {
      source: 'apple_declared_age_range',
      age_lower: 13,
      age_upper: 15,
    });
    expect(raised.statusCode, raised.body).toBe(201);
    expect((await call('GET', `/children/${childId}`)).json()).toMatchObject({
      age: 14,
      effective_age: 14,
      age_group: 'teen',
      age_conflict: false,
    });
    const back = (await call('GET', `/policies/${policyId}`)).json();
    expect(back.version).toBe(atTwelve.version + 1);
    expect(await configs()).toEqual(teenRules);
    expect((await messages(familyId, 'child.age_changed'))[1]).toMatchObject({
      effective_age: 14,
      age_group: 'teen',
      previous_age_group: 'preteen',
    });
    expect((await messages(familyId, 'child.age_signal'))[1]).toMatchObject({
      signal: { id: raised.json().id },
      effective_age: 14,
      age_conflict: false,
    });
  });

  it('a range the birth-date age lies outside of is a conflict, never a raise', async () => {
    const { call, childId, familyId, policyId } = await setUp(await newSession(t.app));
    const before = (await call('GET', `/policies/${policyId}`)).json();
    const res = await call('POST', `/children/${childId}/age-signals`, {
      source: 'age_verification',
      age_lower: 16,
      method: 'id_document',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect((await call('GET', `/children/${childId}`)).json()).toMatchObject({
      age: 14,
      effective_age: 14,
      age_group: 'teen',
      age_conflict: true,
    });
    expect((await call('GET', `/policies/${policyId}`)).json().version).toBe(before.version);
    expect(await messages(familyId, 'child.age_changed')).toEqual([]);
    expect(await messages(familyId, 'child.age_signal')).toEqual([
      { child_id: childId, signal: res.json(), effective_age: 14, age_conflict: true },
    ]);
  });

  it("reads the family's clock: its now is the default and the limit", async () => {
    const session = await newSession(t.app);
    const clock = await as(session)('POST', '/sandbox/test-clocks', {
      frozen_time: '2030-03-01T08:00:00Z',
    });
    expect(clock.statusCode, clock.body).toBe(201);
    const { call, childId } = await setUp(session, { test_clock_id: clock.json().id });
    const url = `/children/${childId}/age-signals`;
    // 2028 is the real clock's future but the family's past.
    const past = await call('POST', url, {
      source: 'windows_age_signals',
      age_upper: 17,
      observed_at: '2028-01-01T00:00:00Z',
    });
    expect(past.statusCode, past.body).toBe(201);
    const now = await call('POST', url, { source: 'parent_declared', age_upper: 17 });
    expect(now.json()).toMatchObject({
      observed_at: '2030-03-01T08:00:00.000Z',
      created_at: '2030-03-01T08:00:00.000Z',
    });
    const future = await call('POST', url, {
      source: 'parent_declared',
      age_upper: 17,
      observed_at: '2030-03-01T08:00:00.001Z',
    });
    expect(future.statusCode).toBe(400);
    expect(future.json().message).toBe('observed_at must not be in the future');
    // 18 by birth date on that clock, 17 by the signals.
    expect((await call('GET', `/children/${childId}`)).json()).toMatchObject({
      age: 18,
      effective_age: 17,
      age_conflict: true,
    });
  });

  it('records a signal through the MCP tool, on the token’s family only', async () => {
    // A fresh user: MCP calls count in the token user's bucket.
    const session = await newSession(t.app);
    const { childId, familyId } = await setUp(session);
    const other = await setUp(await newSession(t.app));
    const minted = await as(session)('POST', '/mcp/tokens', {
      family_id: familyId,
      label: 'assistant',
    });
    expect(minted.statusCode, minted.body).toBe(201);
    let id = 0;
    const rpc = async (method: string, params: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          authorization: `Bearer ${minted.json().plain}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        payload: { jsonrpc: '2.0', id: ++id, method, params },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().result;
    };

    const { tools } = await rpc('tools/list', {});
    const tool = tools.find(
      (candidate: { name: string }) => candidate.name === 'record_age_signal',
    );
    expect(tool.inputSchema.required).toEqual(expect.arrayContaining(['child_id', 'source']));
    expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    // get_child shows where the child stands.
    const getChild = tools.find((candidate: { name: string }) => candidate.name === 'get_child');
    expect(getChild.outputSchema.required).toEqual(
      expect.arrayContaining([
        'age',
        'age_group',
        'effective_age',
        'age_conflict',
        'next_age_change_on',
      ]),
    );

    const recorded = await rpc('tools/call', {
      name: 'record_age_signal',
      arguments: {
        child_id: childId,
        source: 'google_play_age_signals',
        age_lower: 9,
        age_upper: 12,
        method: 'SUPERVISED',
      },
    });
    expect(recorded.isError).toBeFalsy();
    expect(recorded.structuredContent).toMatchObject({
      child_id: childId,
      source: 'google_play_age_signals',
      age_lower: 9,
      age_upper: 12,
      method: 'SUPERVISED',
    });
    const child = await rpc('tools/call', { name: 'get_child', arguments: { child_id: childId } });
    expect(child.structuredContent).toMatchObject({
      age: 14,
      age_group: 'preteen',
      effective_age: 12,
      age_conflict: true,
      next_age_change_on: '2026-06-01',
    });
    const listed = await rpc('tools/call', {
      name: 'list_age_signals',
      arguments: { child_id: childId },
    });
    expect(listed.structuredContent.items).toEqual([recorded.structuredContent]);
    expect(await messages(familyId, 'child.age_signal')).toHaveLength(1);

    // The REST validation, as a tool error.
    expect(
      await rpc('tools/call', {
        name: 'record_age_signal',
        arguments: { child_id: childId, source: 'myspace', age_upper: 12 },
      }),
    ).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: '400 unknown age signal source: myspace' }],
    });
    // Another family's child does not exist for the token.
    expect(
      await rpc('tools/call', {
        name: 'record_age_signal',
        arguments: { child_id: other.childId, source: 'parent_declared', age_upper: 12 },
      }),
    ).toMatchObject({ isError: true, content: [{ type: 'text', text: '404 child not found' }] });
    expect(await messages(other.familyId, 'child.age_signal')).toEqual([]);
  });
});
