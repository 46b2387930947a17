// CONTRACT.md §8 device rows, the agent side: X-Device-Key, the compiled policy and its
// conditional reads, reports, acknowledgements, the device's own rate-limit bucket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import {
  type ChildSetup,
  deviceAgent,
  deviceKey,
  expectEnvelope,
  quickSetup,
  registerDevice,
  sandbox,
} from '../../../test/devices.js';
import { bearer, newSession } from '../../../test/identity.js';
import { RULE_REGISTRY } from '../rules/registry.js';

const ENGAGEMENT = new Set(RULE_REGISTRY.filter((r) => r.engagement).map((r) => r.category));

describe('device agent routes (CONTRACT.md §8)', () => {
  let t: TestApp;
  const parent = sandbox('agent-parent');
  let setup: ChildSetup;
  let agent: ReturnType<typeof deviceAgent>;
  const listDevices = async () => {
    const res = await t.app.inject({
      url: `/api/v1/children/${setup.childId}/devices`,
      headers: parent,
    });
    expect(res.statusCode).toBe(200);
    return res.json() as Array<Record<string, unknown>>;
  };
  const putRule = async (category: string, enabled: boolean) => {
    const entry = RULE_REGISTRY.find((r) => r.category === category);
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/policies/${setup.policyId}/rules/${category}`,
      headers: parent,
      payload: { enabled, config: entry?.default_config },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const policyVersion = async (): Promise<number> =>
    (await t.app.inject({ url: `/api/v1/policies/${setup.policyId}`, headers: parent })).json()
      .version;

  beforeAll(async () => {
    t = await buildTestApp();
    agent = deviceAgent(t);
    setup = await quickSetup(t, parent);
  });
  afterAll(() => t.close());

  it('device flow: compiled policy (enabled, no engagement) → ack → policy change → new version', async () => {
    const { device, device_key: key } = await registerDevice(t, parent, setup.childId);
    // An enabled engagement rule and a disabled ordinary one: neither may reach the device.
    await putRule('infinite_scroll_block', true);
    const rulesRes = await t.app.inject({
      url: `/api/v1/policies/${setup.policyId}/rules`,
      headers: parent,
    });
    const ordinary = (rulesRes.json() as Array<{ category: string; enabled: boolean }>).find(
      (r) => r.enabled && !ENGAGEMENT.has(r.category),
    );
    expect(ordinary).toBeDefined();
    await putRule(ordinary?.category as string, false);
    const allRules = (
      await t.app.inject({ url: `/api/v1/policies/${setup.policyId}/rules`, headers: parent })
    ).json() as Array<{ category: string; enabled: boolean; config: unknown }>;
    const expected = allRules.filter((r) => r.enabled && !ENGAGEMENT.has(r.category));
    const v1 = await policyVersion();

    const first = await agent.policy(key);
    expect(first.statusCode).toBe(200);
    const compiled = first.json();
    expect(Object.keys(compiled).sort()).toEqual([
      'child_id',
      'generated_at',
      'monitoring_notice',
      'policy_id',
      'rules',
      'version',
    ]);
    expect(compiled).toMatchObject({
      child_id: setup.childId,
      policy_id: setup.policyId,
      version: v1,
    });
    expect(first.headers.etag).toBe(`"${setup.policyId}.${v1}"`);
    const categories = compiled.rules.map((r: { category: string }) => r.category);
    expect(categories).not.toContain('infinite_scroll_block');
    expect(categories).not.toContain(ordinary?.category);
    expect(categories.some((c: string) => ENGAGEMENT.has(c))).toBe(false);
    expect([...categories].sort()).toEqual(expected.map((r) => r.category).sort());
    for (const rule of compiled.rules) {
      expect(Object.keys(rule).sort()).toEqual(['category', 'config']);
      expect(rule.config).toEqual(expected.find((r) => r.category === rule.category)?.config);
    }

    const acked = await agent.ack(key, { version: v1 });
    expect(acked.statusCode).toBe(200);
    expect(acked.json()).toEqual({ acknowledged_version: v1 });
    expect((await listDevices()).find((d) => d.id === device.id)?.acknowledged_version).toBe(v1);

    const oldTag = first.headers.etag as string;
    const unchanged = await agent.policy(key, { 'if-none-match': oldTag });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.body).toBe('');
    expect(unchanged.headers.etag).toBe(oldTag);
    expect((await agent.policy(key, {}, `?since_version=${v1}`)).statusCode).toBe(304);

    await putRule('infinite_scroll_block', false);
    const v2 = await policyVersion();
    expect(v2).toBe(v1 + 1);
    const afterOldTag = await agent.policy(key, { 'if-none-match': oldTag });
    expect(afterOldTag.statusCode).toBe(200);
    expect(afterOldTag.json().version).toBe(v2);
    const newTag = afterOldTag.headers.etag as string;
    expect(newTag).toBe(`"${setup.policyId}.${v2}"`);
    expect((await agent.policy(key, {}, `?since_version=${v1}`)).statusCode).toBe(200);
    expect((await agent.policy(key, { 'if-none-match': newTag })).statusCode).toBe(304);
    expect((await agent.policy(key, {}, `?since_version=${v2}`)).statusCode).toBe(304);

    expect((await agent.ack(key, { version: v2 })).json()).toEqual({ acknowledged_version: v2 });
    expect((await listDevices()).find((d) => d.id === device.id)?.acknowledged_version).toBe(v2);
  });

  it('monitoring notice (CONTRACT.md §11.5): the enabled rules that watch the child, sorted', async () => {
    const own = await quickSetup(t, parent, 'Noor');
    const { device_key: key } = await registerDevice(t, parent, own.childId);
    const put = async (category: string, enabled: boolean, config?: object) => {
      const entry = RULE_REGISTRY.find((r) => r.category === category);
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/policies/${own.policyId}/rules/${category}`,
        headers: parent,
        payload: { enabled, config: config ?? entry?.default_config },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    // The quick setup turns monitoring_activity on, and no other rule that watches the child.
    const first = await agent.policy(key);
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.monitoring_notice).toEqual({ required: true, categories: ['monitoring_activity'] });
    // Last key of the body, after the rules.
    expect(
      first.body.endsWith(`,"monitoring_notice":${JSON.stringify(body.monitoring_notice)}}`),
    ).toBe(true);

    // Disabled: nothing watches the child. The change raises the version (new ETag) as before.
    await put('monitoring_activity', false);
    const off = await agent.policy(key, { 'if-none-match': first.headers.etag as string });
    expect(off.statusCode).toBe(200);
    expect(off.json().version).toBe(body.version + 1);
    expect(off.json().monitoring_notice).toEqual({ required: false, categories: [] });

    // Several at once come sorted; a non-monitoring rule (geolocation_opt_in) never counts.
    await put('privacy_location', true);
    await put('monitoring_alerts', true);
    await put('monitoring_activity', true);
    const several = (await agent.policy(key)).json();
    expect(several.monitoring_notice).toEqual({
      required: true,
      categories: ['monitoring_activity', 'monitoring_alerts', 'privacy_location'],
    });

    // An enabled rule whose config switches its watching off does not count either.
    await put('privacy_location', true, { share_with: 'none', precise: false });
    await put('monitoring_alerts', false);
    await put('monitoring_activity', true, { enabled: false });
    const switchedOff = (await agent.policy(key)).json();
    expect(switchedOff.rules.map((r: { category: string }) => r.category)).toContain(
      'monitoring_activity',
    );
    expect(switchedOff.monitoring_notice).toEqual({ required: false, categories: [] });
  });

  it('no active policy: 404 policy not found', async () => {
    const other = await quickSetup(t, parent, 'Leo');
    const { device_key: key } = await registerDevice(t, parent, other.childId);
    const paused = await t.app.inject({
      method: 'POST',
      url: `/api/v1/policies/${other.policyId}/pause`,
      headers: parent,
    });
    expect(paused.statusCode).toBe(200);
    expectEnvelope(await agent.policy(key), 404, 'policy not found');
    expectEnvelope(await agent.policy(key, {}, '?since_version=1'), 404, 'policy not found');
  });

  it('a device whose child was deleted is refused, even while its key is still cached', async () => {
    const other = await quickSetup(t, parent, 'Ivy');
    const { device_key: key } = await registerDevice(t, parent, other.childId);
    expect((await agent.policy(key)).statusCode).toBe(200); // cached as valid
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/children/${other.childId}`,
      headers: parent,
    });
    expect(removed.statusCode).toBe(204);
    const at = '2026-01-15T10:00:00Z';
    expectEnvelope(await agent.policy(key), 401, 'invalid or revoked device key');
    expectEnvelope(
      await agent.report(key, { report_type: 'screen_time', payload: {}, reported_at: at }),
      401,
      'invalid or revoked device key',
    );
    expectEnvelope(await agent.ack(key, { version: 1 }), 401, 'invalid or revoked device key');
  });

  it('device routes take X-Device-Key only, with the exact 401 messages', async () => {
    const missing = await t.app.inject({ url: '/api/v1/device/policy' });
    expectEnvelope(missing, 401, 'missing X-Device-Key header');
    const session = await newSession(t.app);
    const withBearer = await t.app.inject({ url: '/api/v1/device/policy', headers: session.auth });
    expectEnvelope(withBearer, 401, 'missing X-Device-Key header');
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    const asBearer = await t.app.inject({ url: '/api/v1/device/policy', headers: bearer(key) });
    expectEnvelope(asBearer, 401, 'missing X-Device-Key header');
    for (const wrong of [`svcdev_${'A'.repeat(40)}`, 'garbage', '', key.slice(0, -1)]) {
      expectEnvelope(await agent.policy(wrong), 401, 'invalid or revoked device key');
    }
    expectEnvelope(await agent.report('nope', {}), 401, 'invalid or revoked device key');
    expectEnvelope(await agent.ack('nope', { version: 1 }), 401, 'invalid or revoked device key');
    // A device key is no credential on the product plane.
    const product = await t.app.inject({ url: '/api/v1/families', headers: bearer(key) });
    expect(product.statusCode).toBe(401);
  });

  it('keeps every report; enforcement_status becomes the device summary (newest wins)', async () => {
    const { device, device_key: key } = await registerDevice(t, parent, setup.childId);
    const sent = [
      { report_type: 'screen_time', payload: { minutes: 42 }, reported_at: '2026-01-15T10:00:00Z' },
      {
        report_type: 'app_usage',
        payload: { apps: [{ id: 'x', minutes: 3 }] },
        reported_at: '2026-01-15T10:01:00Z',
      },
      {
        report_type: 'web_activity',
        payload: { domains: ['example.com'] },
        reported_at: '2026-01-15T10:02:00Z',
      },
      {
        report_type: 'blocked_attempt',
        payload: { url: 'https://x.test' },
        reported_at: '2026-01-15T10:03:00Z',
      },
      {
        report_type: 'enforcement_status',
        payload: { state: 'ok', rules: 9 },
        reported_at: '2026-01-15T11:00:00+01:00',
      },
      {
        report_type: 'enforcement_status',
        payload: { state: 'stale' },
        reported_at: '2026-01-15T09:00:00Z',
      },
    ];
    for (const body of sent) {
      const res = await agent.report(key, body);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toEqual({ status: 'accepted' });
    }
    const stored = await t.database.handle.db
      .selectFrom('device_reports')
      .select(['report_type', 'payload', 'reported_at'])
      .where('device_id', '=', device.id)
      .orderBy('received_at')
      .orderBy('reported_at')
      .execute();
    expect(stored.map((r) => r.report_type).sort()).toEqual(sent.map((r) => r.report_type).sort());
    expect(stored.find((r) => r.report_type === 'app_usage')?.payload).toEqual(sent[1]?.payload);
    const listed = (await listDevices()).find((d) => d.id === device.id);
    // 11:00+01:00 is 10:00Z, still newer than the late 09:00Z report.
    expect(listed?.enforcement_status).toEqual({ state: 'ok', rules: 9 });
  });

  it('refuses bad report and ack bodies with a 400 naming the field', async () => {
    const { device, device_key: key } = await registerDevice(t, parent, setup.childId);
    const at = '2026-01-15T10:00:00Z';
    const watched = { platform: 'netflix', title: 'x', watched_at: at };
    const cases: Array<[unknown, string]> = [
      [{ payload: {}, reported_at: at }, 'report_type is required'],
      [{ report_type: 'gossip', payload: {}, reported_at: at }, 'report_type must be one of: '],
      [{ report_type: 'screen_time', reported_at: at }, 'payload is required'],
      [
        { report_type: 'screen_time', payload: 'lots', reported_at: at },
        'payload must be an object',
      ],
      [{ report_type: 'screen_time', payload: [1], reported_at: at }, 'payload must be an object'],
      [{ report_type: 'screen_time', payload: {} }, 'reported_at is required'],
      [
        { report_type: 'screen_time', payload: {}, reported_at: 'yesterday' },
        'reported_at must be a valid date-time',
      ],
      [
        { report_type: 'screen_time', payload: {}, reported_at: '2026-01-15T10:00:00' },
        'reported_at must be a valid date-time',
      ],
      [
        { report_type: 'viewing', payload: { ...watched, title: undefined }, reported_at: at },
        'payload.title is required',
      ],
      [
        { report_type: 'viewing', payload: { ...watched, platform: undefined }, reported_at: at },
        'payload.platform is required',
      ],
      [
        { report_type: 'viewing', payload: { ...watched, watched_at: undefined }, reported_at: at },
        'payload.watched_at is required',
      ],
      [
        {
          report_type: 'viewing',
          payload: { ...watched, watched_at: '2026-02-30T10:00:00Z' },
          reported_at: at,
        },
        'payload.watched_at must be a valid date-time',
      ],
      [
        { report_type: 'viewing', payload: { ...watched, title: 7 }, reported_at: at },
        'payload.title must be a string',
      ],
      [
        { report_type: 'viewing', payload: { ...watched, title: '   ' }, reported_at: at },
        'payload.title must not be empty',
      ],
      [
        {
          report_type: 'screen_time',
          payload: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`),
          reported_at: at,
        },
        'payload must be nested at most 32 levels',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await agent.report(key, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'Bad Request', code: 400 });
      expect(res.json().message).toContain(message);
    }
    const raw = await t.app.inject({
      method: 'POST',
      url: '/api/v1/device/report',
      headers: { ...deviceKey(key), 'content-type': 'application/json' },
      payload: '{"report_type":',
    });
    expectEnvelope(raw, 400, 'invalid JSON body');
    for (const [body, message] of [
      [{}, 'version is required'],
      [{ version: 0 }, 'version must be >= 1'],
      [{ version: '3' }, 'version must be an integer'],
      [{ version: 1.5 }, 'version must be an integer'],
    ] as const) {
      expectEnvelope(await agent.ack(key, body), 400, message);
    }
    const count = await t.database.handle.db
      .selectFrom('device_reports')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('device_id', '=', device.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('meters a device in a bucket of its own (100 a minute, house envelope 429)', async () => {
    t.clock.advance(61_000);
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    for (let i = 0; i < 100; i++) {
      const res = await agent.policy(key, {}, '?since_version=0');
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('100');
    }
    const limited = await agent.policy(key);
    expectEnvelope(limited, 429, 'rate limit exceeded');
    expect(limited.headers['retry-after']).toBeDefined();
    // The parent's own requests are in another bucket.
    expect((await listDevices()).length).toBeGreaterThan(0);
    t.clock.advance(61_000);
    expect((await agent.policy(key)).statusCode).toBe(200);
  });

  it('answers hostile input with a valid key with a 4xx envelope, never a 5xx', async () => {
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    const hostile: unknown[] = [
      null,
      -1,
      1e308,
      true,
      [],
      {},
      '\u0000',
      '\ud800',
      'x'.repeat(70_000),
    ];
    const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const bodies: string[] = ['{', '[]', 'null', '12', deep(5_000)];
    const base = { report_type: 'viewing', payload: {}, reported_at: '2026-01-15T10:00:00Z' };
    for (const field of ['report_type', 'payload', 'reported_at']) {
      for (const value of hostile) {
        bodies.push(JSON.stringify({ ...base, [field]: value }));
      }
    }
    for (const field of ['platform', 'title', 'series_title', 'watched_at']) {
      for (const value of hostile) {
        const payload = {
          platform: 'p',
          title: 't',
          watched_at: '2026-01-15T10:00:00Z',
          [field]: value,
        };
        bodies.push(JSON.stringify({ ...base, payload }));
      }
    }
    bodies.push(
      `{"report_type":"screen_time","reported_at":"2026-01-15T10:00:00Z","payload":${deep(5_000)}}`,
    );
    const answers = [];
    for (const [url, list] of [
      ['/api/v1/device/report', bodies],
      ['/api/v1/device/ack', hostile.map((version) => JSON.stringify({ version }))],
    ] as const) {
      for (const payload of list) {
        t.clock.advance(61_000);
        answers.push(
          await t.app.inject({
            method: 'POST',
            url,
            headers: { ...deviceKey(key), 'content-type': 'application/json' },
            payload,
          }),
        );
      }
    }
    for (const query of [
      '?since_version=-1',
      '?since_version=NaN',
      '?since_version=1e99',
      '?x[]=1',
    ]) {
      t.clock.advance(61_000);
      answers.push(await agent.policy(key, {}, query));
    }
    for (const res of answers) {
      expect(res.statusCode, res.body.slice(0, 200)).toBeLessThan(500);
      if (res.statusCode >= 400) {
        expect(res.json().code).toBe(res.statusCode);
      }
    }
  });
});
