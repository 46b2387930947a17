// CONTRACT.md §13: every answered request is counted once, by method, route pattern and
// status, whichever path answered it: routed, or ahead of the router by a fast path (on a
// listening server only). Labels are patterns, never raw paths or ids; a request no route
// matched is `unmatched`; the odd answers (a preflight, a 413 before the body, a 415, the
// address bucket's plain 429, the drain's 503, a client that went away) each count once; and
// every 429 of a rate limit counts in haven_rate_limited_total.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildListeningTestApp, buildTestApp, type TestApp } from '../../test/app.js';
import { TestClock } from '../../test/clock.js';
import { bearer, createOrg, longSession, type MintedKey, mintKey } from '../../test/identity.js';
import { type MetricSnapshot, scrape } from '../../test/metric-samples.js';
import { routedRequests } from '../../test/routed-requests.js';
import { keyedRead } from '../auth/keyed-read-fast-path.js';

const REQUESTS = 'haven_http_requests_total';
const DURATION_COUNT = 'haven_http_request_duration_seconds_count';
const RATE_LIMITED = 'haven_rate_limited_total';
const TRUST_LIST = '/.well-known/ocss/trust-list';
const PLATFORMS = '/api/v1/developer/platforms';
/** Labels name a route as its OpenAPI path does (the Fastify pattern's `:x` as `{x}`). */
const CHILDREN = '/api/v1/developer/families/{familyID}/children';
const HELD = '/test/held';
const HELD_READ = '/api/v1/developer/test-held/:itemID';
const HELD_READ_LABEL = '/api/v1/developer/test-held/{itemID}';
const SIGNED = '/test/signed-read';

/** Resolves when `done` holds, polling with a deadline (no fixed sleep). */
async function until(done: () => Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs} ms: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A gate a route waits at until the test opens it, saying when a request reached it. */
function gate() {
  let reached = 0;
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    async pass() {
      reached++;
      await opened;
    },
    reached: () => reached,
    open: () => open(),
  };
}

/**
 * Routes the test holds open (a client can leave while they work): a GET, a POST with a JSON
 * body, a keyed read answered ahead of the router, and a signed read's fast path (whose body
 * the client never finishes).
 */
function heldRoutes() {
  const held = gate();
  const read = keyedRead(async (_principal, params) => {
    await held.pass();
    return { id: params.itemID };
  });
  const test = { tags: ['Test'], summary: 'A route the test holds open' };
  async function plugin(app: FastifyInstance) {
    app.get(HELD, { schema: { ...test, operationId: 'testHeldGet' } }, async () => {
      await held.pass();
      return { ok: true };
    });
    app.post(
      HELD,
      { schema: { ...test, operationId: 'testHeldPost', body: Type.Object({}) } },
      async () => {
        await held.pass();
        return { ok: true };
      },
    );
    app.get(
      HELD_READ,
      {
        config: { auth: 'developer', scope: 'read:families', keyedRead: read },
        schema: {
          ...test,
          operationId: 'testHeldRead',
          params: Type.Object({ itemID: Type.String({ format: 'uuid' }) }),
          response: { 200: Type.Object({ id: Type.String() }) },
        },
      },
      async (request) => read(request.principal as never, request.params as never),
    );
    app.post(
      SIGNED,
      {
        config: { signedRead: () => undefined },
        schema: { ...test, operationId: 'testSignedRead' },
      },
      async () => ({ ok: true }),
    );
  }
  Object.assign(plugin, { [Symbol.for('skip-override')]: true });
  return { held, plugin };
}

/** Each series' histogram count equals the sum of its counter over statuses. */
function expectHistogramMatchesCounter(metrics: MetricSnapshot): void {
  const counts = metrics.find(DURATION_COUNT);
  expect(counts.length).toBeGreaterThan(0);
  for (const { labels, value } of counts) {
    expect(metrics.value(REQUESTS, labels), `${labels.method} ${labels.route}`).toBe(value);
  }
}

/** Writes a raw request on a new connection and closes it once `leave` resolves. */
async function leaveEarly(port: number, request: string, leave: () => Promise<void>) {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(request);
  await leave();
  socket.destroy();
}

describe('request metrics', () => {
  let t: TestApp & { baseUrl: string };
  let routed: string[];
  let held: ReturnType<typeof gate>;
  let key: MintedKey;
  let familyId: string;
  /** Whether the keyed fast paths exist (not with Redis buckets: see app.ts). */
  let keyedFast: boolean;

  beforeEach(async () => {
    const requests = routedRequests();
    routed = requests.routed;
    const routes = heldRoutes();
    held = routes.held;
    t = await buildListeningTestApp({ plugins: [requests.plugin, routes.plugin] });
    keyedFast = !t.config.redisUrl;
    const owner = await longSession(t);
    const org = await createOrg(t.app, owner);
    key = await mintKey(t.app, owner, org.id);
    const family = await t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/families',
      headers: bearer(key.key),
      payload: { name: 'Counted Family' },
    });
    expect(family.statusCode, family.body).toBe(201);
    familyId = family.json().id;
  });
  afterEach(async () => t.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${t.baseUrl}${path}`, { headers });

  it('counts routed and fast-path requests exactly once each, under the route pattern', async () => {
    const etag = (await get(TRUST_LIST)).headers.get('etag') as string;
    const before = await scrape(t.app);
    routed.length = 0;

    // Routed: the trust list without a tag (3), /health by inject (2, never a fast path).
    for (let i = 0; i < 3; i++) {
      expect((await get(TRUST_LIST)).status).toBe(200);
    }
    for (let i = 0; i < 2; i++) {
      expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    }
    expect(routed).toEqual([TRUST_LIST, TRUST_LIST, TRUST_LIST]);
    // Ahead of the router: the trust list's 304 (4), the keyed catalog read (3).
    for (let i = 0; i < 4; i++) {
      expect((await get(TRUST_LIST, { 'if-none-match': etag })).status).toBe(304);
    }
    for (let i = 0; i < 3; i++) {
      expect((await get(PLATFORMS, bearer(key.key))).status).toBe(200);
    }
    expect(routed.filter((path) => path === TRUST_LIST)).toHaveLength(3);
    if (keyedFast) {
      // The key was in memory since it made the family: no catalog read was routed.
      expect(routed).not.toContain(PLATFORMS);
    }

    const after = await scrape(t.app);
    const delta = (labels: Record<string, string>, name = REQUESTS) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta({ method: 'GET', route: TRUST_LIST, status: '200' })).toBe(3);
    expect(delta({ method: 'GET', route: TRUST_LIST, status: '304' })).toBe(4);
    expect(delta({ method: 'GET', route: TRUST_LIST }, DURATION_COUNT)).toBe(7);
    expect(delta({ method: 'GET', route: '/health', status: '200' })).toBe(2);
    expect(delta({ method: 'GET', route: PLATFORMS, status: '200' })).toBe(3);
    expect(delta({ method: 'GET', route: PLATFORMS }, DURATION_COUNT)).toBe(3);
    // The first scrape is counted too, once, like any request.
    expect(delta({ method: 'GET', route: '/metrics', status: '200' })).toBe(1);
    // Nothing else moved: 12 requests and the scrape.
    expect(delta({})).toBe(13);
    // Durations are real, the fast path's too: each adds to the sum.
    const sum = { method: 'GET', route: PLATFORMS };
    expect(delta(sum, 'haven_http_request_duration_seconds_sum')).toBeGreaterThan(0);
    expectHistogramMatchesCounter(after);
  });

  it('labels a path with an id by its pattern, and a path no route matches as unmatched', async () => {
    const children = `/api/v1/developer/families/${familyId}/children`;
    const stranger = randomUUID();
    const before = await scrape(t.app);
    routed.length = 0;
    // The children read twice with the key (ahead of the router when keyed fast paths exist),
    // a family that is not the key's (404 from the route, by its pattern), an unknown path
    // with an id in it, and a malformed URL (answered before routing).
    for (let i = 0; i < 2; i++) {
      expect((await get(children, bearer(key.key))).status).toBe(200);
    }
    expect(
      (await get(`/api/v1/developer/families/${stranger}/children`, bearer(key.key))).status,
    ).toBe(404);
    expect((await get(`/api/v1/nowhere/${stranger}`)).status).toBe(404);
    const malformed = await t.app.inject({ url: '/api/v1/developer/families/%ff/children' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ message: 'malformed URL' });
    expect(routed.filter((path) => path === children)).toHaveLength(keyedFast ? 0 : 2);

    const text = (await t.app.inject({ url: '/metrics' })).body;
    for (const id of [familyId, stranger, key.key, key.id]) {
      expect(text).not.toContain(id);
    }
    expect(text).not.toContain('%ff');
    const after = await scrape(t.app);
    const delta = (labels: Record<string, string>) =>
      after.value(REQUESTS, labels) - before.value(REQUESTS, labels);
    expect(delta({ route: CHILDREN, status: '200' })).toBe(2);
    expect(delta({ route: CHILDREN, status: '404' })).toBe(1);
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(delta({ method: 'GET', route: 'unmatched', status: '400' })).toBe(1);
    // Every route label is a pattern or `unmatched`: none names a raw path.
    for (const { labels } of after.find(REQUESTS)) {
      expect(labels.route).toMatch(/^(unmatched|\/[a-zA-Z0-9/._{}-]*)$/);
      expect(labels.route).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    }
    expectHistogramMatchesCounter(after);
  });

  it('counts the odd answers once: a preflight, 413, 415, the plain 429, the drain’s 503', async () => {
    const SESSION_TOKEN = '/api/v1/sandbox/session-token';
    const before = await scrape(t.app);
    const preflight = await fetch(`${t.baseUrl}/api/v1/developer/families`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    // 2 MiB announced: the 413 leaves before the body is in (an early answer, lingering).
    const tooLarge = await fetch(`${t.baseUrl}${SESSION_TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `"${'x'.repeat(2 * 1024 * 1024)}"`,
    });
    expect(tooLarge.status).toBe(413);
    const wrongType = await fetch(`${t.baseUrl}${SESSION_TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(wrongType.status).toBe(415);
    // The address's bucket: calls without a credential until the plain-text 429.
    let refused: Response | undefined;
    let forbidden = 0;
    for (let i = 0; i < 150 && !refused; i++) {
      const res = await get('/api/v1/developer/families');
      if (res.status === 429) {
        refused = res;
      } else {
        expect(res.status).toBe(403);
        forbidden++;
        await res.arrayBuffer();
      }
    }
    expect(refused?.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await refused?.text()).toBe('Too Many Requests');

    let after = await scrape(t.app);
    const delta = (labels: Record<string, string>, name = REQUESTS) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta({ method: 'OPTIONS', route: 'unmatched', status: '204' })).toBe(1);
    expect(delta({ method: 'POST', route: SESSION_TOKEN, status: '413' })).toBe(1);
    expect(delta({ method: 'POST', route: SESSION_TOKEN, status: '415' })).toBe(1);
    const families = { method: 'GET', route: '/api/v1/developer/families' };
    expect(delta({ ...families, status: '403' })).toBe(forbidden);
    expect(delta({ ...families, status: '429' })).toBe(1);
    expect(delta({}, RATE_LIMITED)).toBe(1);

    // Draining: a new request gets the drain's 503 (the scrape still answers).
    await t.app.drain(1_000);
    expect((await get(PLATFORMS, bearer(key.key))).status).toBe(503);
    after = await scrape(t.app);
    expect(delta({ method: 'GET', route: PLATFORMS, status: '503' })).toBe(1);
    expectHistogramMatchesCounter(after);
  });

  it('counts every 429 of a rate limit once, the fast paths’ full buckets included', async () => {
    const before = await scrape(t.app);
    let status = 200;
    let allowed = 0;
    for (let i = 0; i < 150 && status === 200; i++) {
      const res = await get(PLATFORMS, bearer(key.key));
      status = res.status;
      allowed += status === 200 ? 1 : 0;
      await res.arrayBuffer();
    }
    expect(status).toBe(429);
    // Refused again, and a keyed read by id on the same org's bucket.
    expect((await get(PLATFORMS, bearer(key.key))).status).toBe(429);
    const children = `/api/v1/developer/families/${familyId}/children`;
    expect((await get(children, bearer(key.key))).status).toBe(429);

    const after = await scrape(t.app);
    const delta = (labels: Record<string, string>, name = REQUESTS) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta({ route: PLATFORMS, status: '200' })).toBe(allowed);
    expect(delta({ route: PLATFORMS, status: '429' })).toBe(2);
    expect(delta({ route: CHILDREN, status: '429' })).toBe(1);
    expect(delta({}, RATE_LIMITED)).toBe(3);
    expectHistogramMatchesCounter(after);
  });

  it('counts an MCP tool call once, as the /mcp request (not the REST call it makes)', async () => {
    const owner = await longSession(t);
    const setup = await t.app.inject({
      method: 'POST',
      url: '/api/v1/setup/quick',
      headers: owner.auth,
      payload: { child_name: 'Ada', birth_date: '2016-04-05' },
    });
    expect(setup.statusCode, setup.body).toBe(201);
    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: owner.auth,
      payload: { family_id: setup.json().family.id, label: 'assistant' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const before = await scrape(t.app);
    const call = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        authorization: `Bearer ${minted.json().plain}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_family', arguments: {} },
      }),
    });
    expect(call.status).toBe(200);
    expect(JSON.stringify(await call.json())).toContain(setup.json().family.id);
    const after = await scrape(t.app);
    expect(after.value(REQUESTS, { route: '/mcp', status: '200' })).toBe(1);
    // The scrape and the tool call, nothing else.
    expect(after.value(REQUESTS) - before.value(REQUESTS)).toBe(2);
  });

  it('counts a request whose client went away as 499, once, routed or ahead of the router', async () => {
    const port = Number(new URL(t.baseUrl).port);
    // The key in memory, for the held read's fast path.
    expect((await get(PLATFORMS, bearer(key.key))).status).toBe(200);
    const before = await scrape(t.app);
    const reached = (n: number) => () => until(async () => held.reached() >= n, `${n} reached`);

    await leaveEarly(port, `GET ${HELD} HTTP/1.1\r\nhost: x\r\n\r\n`, reached(1));
    await leaveEarly(
      port,
      `POST ${HELD} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`,
      reached(2),
    );
    const heldRead = HELD_READ.replace(':itemID', randomUUID());
    await leaveEarly(
      port,
      `GET ${heldRead} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key.key}\r\n\r\n`,
      reached(3),
    );
    // A signed read whose body never ends: its fast path is reading it when the client goes
    // (the server's 'request' listeners run after the fast paths took theirs).
    let signedArrived = false;
    t.app.server.on('request', (request) => {
      signedArrived ||= request.url === SIGNED;
    });
    await leaveEarly(
      port,
      `POST ${SIGNED} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\nsignature: sig=:AA==:\r\nsignature-input: sig=()\r\n\r\n{"a":`,
      () => until(async () => signedArrived, 'the signed read arrived'),
    );

    const gone = async (labels: Record<string, string>) =>
      (await scrape(t.app)).value(REQUESTS, { ...labels, status: '499' }) -
      before.value(REQUESTS, { ...labels, status: '499' });
    await until(async () => (await gone({ route: HELD })) === 2, 'the routed 499s');
    await until(async () => (await gone({ route: SIGNED })) === 1, 'the signed read’s 499');
    // The held routes finish their work once let go: nothing more is counted for them. The
    // read ahead of the router learns its client left only then, when it has its answer.
    held.open();
    await until(async () => (await gone({ route: HELD_READ_LABEL })) === 1, 'the held read’s 499');
    expect((await get(HELD)).status).toBe(200);
    const after = await scrape(t.app);
    const delta = (labels: Record<string, string>) =>
      after.value(REQUESTS, labels) - before.value(REQUESTS, labels);
    expect(delta({ method: 'GET', route: HELD })).toBe(2);
    expect(delta({ method: 'GET', route: HELD, status: '200' })).toBe(1);
    expect(delta({ method: 'POST', route: HELD })).toBe(1);
    expect(delta({ route: HELD_READ_LABEL })).toBe(1);
    expect(delta({ route: SIGNED })).toBe(1);
    expectHistogramMatchesCounter(after);
  });
});

describe.runIf(process.env.REDIS_URL)('rate limiting with Redis buckets', () => {
  it('counts each 429 once', async () => {
    // A clock of its own, far from other tests' buckets in the shared Redis.
    const clock = new TestClock(new Date(Date.now() + Math.random() * 1e12));
    const t = await buildTestApp({ clock, env: { REDIS_URL: process.env.REDIS_URL ?? '' } });
    try {
      const owner = await longSession(t);
      const org = await createOrg(t.app, owner);
      const key = await mintKey(t.app, owner, org.id);
      const before = await scrape(t.app);
      let status = 200;
      for (let i = 0; i < 150 && status === 200; i++) {
        status = (await t.app.inject({ url: PLATFORMS, headers: bearer(key.key) })).statusCode;
      }
      expect(status).toBe(429);
      expect((await t.app.inject({ url: PLATFORMS, headers: bearer(key.key) })).statusCode).toBe(
        429,
      );
      const after = await scrape(t.app);
      expect(after.value(RATE_LIMITED) - before.value(RATE_LIMITED)).toBe(2);
      expect(
        after.value(REQUESTS, { route: PLATFORMS, status: '429' }) -
          before.value(REQUESTS, { route: PLATFORMS, status: '429' }),
      ).toBe(2);
    } finally {
      await t.close();
    }
  });
});
