// docs/decisions.md "Keyed catalog reads are answered ahead of the router": over a real
// socket, a key in memory gets the route's bytes and headers, counted in its org's bucket and
// its usage, with an access line; whatever the fast path does not fully know (a key not yet
// in memory, a missing scope, a revoked key, a full bucket, a query, a proxy header, HEAD, a
// session) reaches the route, seen here by a hook that only routed requests pass.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../test/app.js';
import {
  bearer,
  createOrg,
  longSession,
  type MintedKey,
  mintKey,
  type Session,
} from '../../test/identity.js';
import {
  expectScopeRefusedTwice,
  HEADERS_WRITTEN_ALIKE,
  routedRequests,
} from '../../test/routed-requests.js';

const PLATFORMS = '/api/v1/developer/platforms';
describe('keyed catalog reads answered ahead of the router', () => {
  let t: TestApp & { baseUrl: string };
  let owner: Session;
  let orgId: string;
  let key: MintedKey;
  /** Paths of the socket's requests (not the test's injected ones) that Fastify routed. */
  let routed: string[];

  beforeEach(async () => {
    const requests = routedRequests();
    routed = requests.routed;
    t = await buildListeningTestApp({ plugins: [requests.plugin] });
    owner = await longSession(t);
    orgId = (await createOrg(t.app, owner)).id;
    key = await mintKey(t.app, owner, orgId);
  });
  afterEach(async () => t.close());

  const read = (path: string, headers: Record<string, string>, method = 'GET') =>
    fetch(`${t.baseUrl}${path}`, { method, headers });

  it('answers like the route: same bytes and headers, one bucket, usage and an access line', async () => {
    // The first read is the route's (the key is not in memory yet): the reference answer.
    const first = await read(PLATFORMS, bearer(key.key));
    expect(first.status).toBe(200);
    const body = await first.text();
    expect(routed).toEqual([PLATFORMS]);

    const fast = await read(PLATFORMS, { ...bearer(key.key), 'x-request-id': 'catalog-1' });
    const byHeader = await read(PLATFORMS, { 'x-api-key': key.key });
    for (const answer of [fast, byHeader]) {
      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe(body);
      for (const name of HEADERS_WRITTEN_ALIKE) {
        expect(answer.headers.get(name), name).toBe(first.headers.get(name));
      }
      // And no header more or less than the route's.
      expect([...answer.headers.keys()].sort()).toEqual([...first.headers.keys()].sort());
    }
    expect(fast.headers.get('x-request-id')).toBe('catalog-1');
    expect(routed).toEqual([PLATFORMS]);
    // One bucket across both paths: each answer took exactly one request from the window.
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(Number(fast.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    expect(Number(byHeader.headers.get('x-ratelimit-remaining'))).toBe(remaining - 2);

    // The other catalogs, on both surfaces, once routed and then from memory.
    for (const path of [
      '/api/v1/platforms',
      '/api/v1/developer/rules/categories',
      '/api/v1/developer/ratings/systems',
    ]) {
      const reference = await t.app.inject({ url: path, headers: bearer(key.key) });
      expect(reference.statusCode, path).toBe(200);
      const answer = await read(path, bearer(key.key));
      expect(answer.status, path).toBe(200);
      expect(await answer.text(), path).toBe(reference.body);
    }
    expect(routed).toEqual([PLATFORMS]);

    // Counted in the key's usage like any routed request.
    await t.app.flushUsage();
    const usage = await t.app.inject({
      url: `/api/v1/developers/orgs/${orgId}/usage?key_id=${key.id}`,
      headers: owner.auth,
    });
    expect(usage.json()).toContainEqual(
      expect.objectContaining({ endpoint: PLATFORMS, status_2xx: 3, total_requests: 3 }),
    );
    // And one access line each, the same fields as the route's line.
    const lines = t.logs.filter((line) => line.msg === 'request completed');
    const routedLine = lines.find((line) => line.path === PLATFORMS);
    const fastLine = lines.find((line) => line.reqId === 'catalog-1');
    expect(fastLine).toMatchObject({
      method: 'GET',
      route: PLATFORMS,
      path: PLATFORMS,
      status: 200,
    });
    expect(Object.keys(fastLine ?? {}).sort()).toEqual(Object.keys(routedLine ?? {}).sort());
  });

  it('leaves a missing scope, a revoked key, a full bucket and what it does not read to the route', async () => {
    expect((await read(PLATFORMS, bearer(key.key))).status).toBe(200);
    expect(routed).toHaveLength(1);

    // A key without the catalog's scope: the route's 403, every time.
    const narrow = await mintKey(t.app, owner, orgId, { scopes: ['read:families'] });
    await expectScopeRefusedTwice(() => read(PLATFORMS, bearer(narrow.key)), 'read:platforms');
    expect(routed).toHaveLength(3);

    // Requests it does not read: a query, a proxy's client address, HEAD, a session.
    expect((await read(`${PLATFORMS}?page=1`, bearer(key.key))).status).toBe(200);
    const proxied = await read(PLATFORMS, { ...bearer(key.key), 'x-forwarded-for': '203.0.113.7' });
    expect(proxied.status).toBe(200);
    expect((await read(PLATFORMS, bearer(key.key), 'HEAD')).status).toBe(200);
    expect((await read('/api/v1/platforms', owner.auth)).status).toBe(200);
    expect(routed).toHaveLength(7);

    // The org's 100 a minute hold whichever path answers; the refusal is the route's 429.
    let last = await read(PLATFORMS, bearer(key.key));
    for (let sent = 1; last.status === 200 && sent <= 100; sent++) {
      last = await read(PLATFORMS, bearer(key.key));
    }
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await last.json()).toMatchObject({ code: 429, message: 'rate limit exceeded' });
    expect(routed).toHaveLength(8);

    // Revoked: gone from memory at once, and the route says so.
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/developers/orgs/${orgId}/keys/${key.id}`,
      headers: owner.auth,
    });
    expect(revoked.statusCode, revoked.body).toBeLessThan(300);
    const gone = await read(PLATFORMS, bearer(key.key));
    expect(gone.status).toBe(401);
    expect(await gone.json()).toMatchObject({ message: 'API key has been revoked' });
  });
});
