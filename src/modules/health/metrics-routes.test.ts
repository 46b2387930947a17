// GET /metrics (CONTRACT.md §13): the Prometheus text exposition; open in the sandbox without
// METRICS_TOKEN, behind `Authorization: Bearer <METRICS_TOKEN>` when one is set (401 in the
// house envelope otherwise), and not there at all in production without one. Never metered:
// no rate-limit headers, no 429, nothing in an API key's usage; counted in the request metrics
// like any request.
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, longSession, mintKey } from '../../../test/identity.js';
import { parseExposition } from '../../../test/metric-samples.js';
import { productionEnv } from '../../../test/production.js';

const TOKEN = 'metrics-token-of-this-test-0123456789';

describe('GET /metrics', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is open in the sandbox without a token: the exposition, never metered', async () => {
    t = await buildTestApp();
    const app = t.app;
    const owner = await longSession(t);
    const org = await createOrg(app, owner);
    const key = await mintKey(app, owner, org.id);
    // Past the per-address and the org's limits (100 a minute each), with and without a key.
    let last = await app.inject({ url: '/metrics' });
    for (let i = 0; i < 105; i++) {
      last = await app.inject({ url: '/metrics', headers: i % 2 ? bearer(key.key) : {} });
      expect(last.statusCode, `scrape ${i}`).toBe(200);
      expect(Object.keys(last.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual(
        [],
      );
    }
    expect(last.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(last.headers['x-request-id']).toEqual(expect.any(String));
    const samples = parseExposition(last.body);
    const names = new Set(samples.map((sample) => sample.name));
    for (const name of [
      'haven_http_requests_total',
      'haven_http_request_duration_seconds_bucket',
      'haven_http_request_duration_seconds_count',
      'process_cpu_seconds_total',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(names, name).toContain(name);
    }
    // Counted like any request: the 105 scrapes before the last (whose own count follows
    // its answer).
    const scrapes = samples.find(
      (s) => s.name === 'haven_http_requests_total' && s.labels.route === '/metrics',
    );
    expect(scrapes).toMatchObject({ labels: { method: 'GET', status: '200' }, value: 105 });

    // Nothing in the key's usage.
    await app.flushUsage();
    const usage = await app.inject({
      url: `/api/v1/developers/orgs/${org.id}/usage?key_id=${key.id}`,
      headers: owner.auth,
    });
    expect(usage.statusCode).toBe(200);
    expect(usage.json()).toEqual([]);
  });

  it('needs the bearer token when METRICS_TOKEN is set: 401 in the envelope otherwise', async () => {
    t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN } });
    const refusals = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
      { authorization: TOKEN },
    ];
    for (const headers of refusals) {
      const res = await t.app.inject({ url: '/metrics', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        error: 'Unauthorized',
        message: 'invalid or missing metrics token',
        code: 401,
      });
      expect(res.body).not.toContain('haven_');
    }
    const ok = await t.app.inject({
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const refused = parseExposition(ok.body).find(
      (s) => s.name === 'haven_http_requests_total' && s.labels.route === '/metrics',
    );
    expect(refused).toMatchObject({ labels: { status: '401' }, value: refusals.length });
  });

  it('is not there in production without a token, and there with one', async () => {
    t = await buildTestApp({ env: productionEnv() });
    const missing = await t.app.inject({ url: '/metrics' });
    const unknown = await t.app.inject({ url: '/no-such-path' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual(unknown.json());
    expect(missing.headers['content-type']).toBe(unknown.headers['content-type']);
    await t.close();

    t = await buildTestApp({ env: { ...productionEnv(), METRICS_TOKEN: TOKEN } });
    expect((await t.app.inject({ url: '/metrics' })).statusCode).toBe(401);
    const ok = await t.app.inject({
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE haven_http_requests_total counter');
  });
});
