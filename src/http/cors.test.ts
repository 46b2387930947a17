// The cross-origin policy (docs/decisions.md "Cross-origin requests"): any origin, no
// credentials, preflights answered before authentication and never metered; and the headers
// every response carries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';

describe('cross-origin requests and response headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('answers a preflight with 204 and the policy, without a credential and without metering', async () => {
    for (const url of ['/api/v1/families', '/api/v1/developer/families', '/api/v1/nope']) {
      for (let i = 0; i < 3; i++) {
        const res = await t.app.inject({
          method: 'OPTIONS',
          url,
          headers: {
            origin: 'https://parents.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type, idempotency-key',
            'x-request-id': `preflight-${i}`,
          },
        });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(204);
        expect(res.body).toBe('');
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
        expect(res.headers['access-control-allow-methods']).toBe('GET, POST, PUT, PATCH, DELETE');
        const allowed = String(res.headers['access-control-allow-headers']).split(', ');
        for (const header of ['authorization', 'content-type', 'idempotency-key', 'x-device-key']) {
          expect(allowed).toContain(header);
        }
        expect(res.headers['access-control-max-age']).toBe('600');
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        expect(res.headers['x-request-id']).toBe(`preflight-${i}`);
      }
    }
  });

  it('lets a page read answers and the headers that matter, errors included', async () => {
    const origin = { origin: 'https://parents.example' };
    for (const [url, status] of [
      ['/api/v1/families', 200],
      ['/api/v1/developer/families', 403],
      ['/health', 200],
      ['/api/v2/anything', 404],
    ] as const) {
      const res = await t.app.inject({ url, headers: origin });
      expect(res.statusCode, url).toBe(status);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      const exposed = String(res.headers['access-control-expose-headers']).split(', ');
      for (const header of ['x-request-id', 'x-ratelimit-remaining', 'retry-after', 'etag']) {
        expect(exposed).toContain(header);
      }
    }
  });

  it('serves the trust list 304 fast path with the same policy', async () => {
    const first = await t.app.inject({ url: '/.well-known/ocss/trust-list' });
    const etag = String(first.headers.etag);
    expect(first.headers['access-control-allow-origin']).toBe('*');
    const listening = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${listening}/.well-known/ocss/trust-list`, {
      headers: { 'if-none-match': etag, origin: 'https://verifier.example' },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('etag');
  });

  it('says nothing about the server and forbids content sniffing, on every response', async () => {
    for (const request of [
      { url: '/health' },
      { url: '/api/v1/families' },
      { url: '/nowhere' },
      { method: 'POST' as const, url: '/api/v1/families', payload: '{broken' },
      { method: 'OPTIONS' as const, url: '/api/v1/families' },
    ]) {
      const res = await t.app.inject({
        ...request,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers.server).toBeUndefined();
      expect(res.headers['x-content-type-options'], request.url).toBe('nosniff');
    }
  });
});
