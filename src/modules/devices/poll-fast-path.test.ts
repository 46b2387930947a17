// The device poll answered ahead of the router (docs/decisions.md "Fast paths ahead of the
// router"): over a real socket, a current poll gets the route's 304 and an unconditional one
// the route's compiled body (same headers, counted in the same bucket), and whatever the fast
// path does not fully know still reaches the route.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../../test/app.js';
import { type ChildSetup, quickSetup, registerDevice, sandbox } from '../../../test/devices.js';
import { RULE_REGISTRY } from '../rules/registry.js';

const POLICY = '/api/v1/device/policy';
const parent = sandbox('poll-fast-path-parent');
/** Headers both paths must write alike (date, request id and the window's count move). */
const SAME = [
  'etag',
  'cache-control',
  'x-ratelimit-limit',
  'x-content-type-options',
  'access-control-allow-origin',
  'access-control-expose-headers',
];

describe('device poll answered ahead of the router', () => {
  let t: TestApp & { baseUrl: string };
  let setup: ChildSetup;
  beforeEach(async () => {
    t = await buildListeningTestApp();
    setup = await quickSetup(t, parent);
  });
  afterEach(async () => {
    await t.app.close();
    await t.database.drop();
  });

  const poll = (key: string, headers: Record<string, string> = {}, query = '') =>
    fetch(`${t.baseUrl}${POLICY}${query}`, { headers: { 'x-device-key': key, ...headers } });
  const routeLines = () =>
    t.logs.filter((line) => line.msg === 'request completed' && line.path === POLICY).length;

  it('writes the route’s 304 for a current poll, counted once in the device’s bucket', async () => {
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    const first = await poll(key);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag') as string;
    const firstBody = await first.text();
    const { version } = JSON.parse(firstBody) as { version: number };
    // app.inject never passes the server's fast paths: this is the route's own 304.
    const routed = await t.app.inject({
      url: POLICY,
      headers: { 'x-device-key': key, 'if-none-match': etag },
    });
    expect(routed.statusCode).toBe(304);
    expect(routeLines()).toBe(2);

    const byTag = await poll(key, { 'if-none-match': etag, 'x-request-id': 'poll-1' });
    const byVersion = await poll(key, {}, `?since_version=${version}`);
    for (const fast of [byTag, byVersion]) {
      expect(fast.status).toBe(304);
      expect(await fast.text()).toBe('');
      for (const name of SAME) {
        expect(fast.headers.get(name), name).toBe(String(routed.headers[name]));
      }
    }
    expect(byTag.headers.get('x-request-id')).toBe('poll-1');
    // One bucket across both paths: each answer took exactly one request from the window.
    const remaining = Number(routed.headers['x-ratelimit-remaining']);
    expect(Number(byTag.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    expect(Number(byVersion.headers.get('x-ratelimit-remaining'))).toBe(remaining - 2);
    // The compiled body of that version is in memory too: an unconditional poll gets it,
    // stamped with the time of the answer (the test clock stands still: the same bytes).
    const again = await poll(key);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstBody);
    for (const name of [...SAME, 'content-type']) {
      expect(again.headers.get(name), name).toBe(first.headers.get(name));
    }
    expect(Number(again.headers.get('x-ratelimit-remaining'))).toBe(remaining - 3);
    // Not routed, and still one access line each, the same fields as the route's.
    expect(routeLines()).toBe(5);
    const routedLine = t.logs.find((line) => line.path === POLICY && line.status === 304);
    const fastLine = t.logs.find((line) => line.reqId === 'poll-1');
    expect(fastLine).toMatchObject({
      msg: 'request completed',
      level: 30,
      method: 'GET',
      route: POLICY,
      path: POLICY,
      status: 304,
    });
    expect(Object.keys(fastLine ?? {}).sort()).toEqual(Object.keys(routedLine ?? {}).sort());
    expect(typeof fastLine?.ms).toBe('number');
    // The query is never written.
    expect(t.rawLogs.some((raw) => raw.includes('since_version'))).toBe(false);
  });

  it('sends the route’s monitoring notice from memory (CONTRACT.md §11.5), byte for byte', async () => {
    const { device_key: key } = await registerDevice(t, parent, setup.childId);
    /** The route's 200 (app.inject never takes the fast path), then the fast path's. */
    const bothPaths = async () => {
      const routed = await t.app.inject({ url: POLICY, headers: { 'x-device-key': key } });
      expect(routed.statusCode).toBe(200);
      const lines = routeLines();
      const fast = await poll(key);
      expect(fast.status).toBe(200);
      const fastBody = await fast.text();
      // Same bytes (the test clock stands still). The route just read key, version and body,
      // so this answer is the fast path's from memory (as in the first test), one access line.
      expect(fastBody).toBe(routed.body);
      expect(routeLines()).toBe(lines + 1);
      return JSON.parse(fastBody).monitoring_notice;
    };
    expect(await bothPaths()).toEqual({ required: true, categories: ['monitoring_activity'] });

    const activity = RULE_REGISTRY.find((rule) => rule.category === 'monitoring_activity');
    const disabled = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/policies/${setup.policyId}/rules/monitoring_activity`,
      headers: parent,
      payload: { enabled: false, config: activity?.default_config },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(await bothPaths()).toEqual({ required: false, categories: [] });
  });

  it('leaves a changed policy, a revoked key, a bad query and a full bucket to the route', async () => {
    const { device_key: key, device } = await registerDevice(t, parent, setup.childId);
    const first = await poll(key);
    const etag = first.headers.get('etag') as string;
    expect((await poll(key, { 'if-none-match': etag })).status).toBe(304);

    const limit = RULE_REGISTRY.find((rule) => rule.category === 'time_daily_limit');
    const changed = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/policies/${setup.policyId}/rules/time_daily_limit`,
      headers: parent,
      payload: {
        enabled: true,
        config: { ...(limit?.default_config as object), daily_minutes: 33 },
      },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    const fresh = await poll(key, { 'if-none-match': etag });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('etag')).not.toBe(etag);

    const bad = await poll(key, {}, '?since_version=soon');
    expect(bad.status).toBe(400);

    // The bucket holds 100 a minute whichever path answers; the 101st is the route's 429.
    const current = fresh.headers.get('etag') as string;
    let last = await poll(key, { 'if-none-match': current });
    for (let sent = 1; last.status === 304 && sent <= 100; sent++) {
      last = await poll(key, { 'if-none-match': current });
    }
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await last.json()).toMatchObject({ code: 429, message: 'rate limit exceeded' });

    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/devices/${device.id}`,
      headers: parent,
    });
    expect(revoked.statusCode, revoked.body).toBe(204);
    const gone = await poll(key, { 'if-none-match': current });
    expect(gone.status).toBe(401);
  });
});
