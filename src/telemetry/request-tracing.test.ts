// CONTRACT.md §13: with OTEL_EXPORTER_OTLP_ENDPOINT set, every request is one SERVER span,
// exported by OTLP/HTTP, continuing an incoming W3C traceparent, named by the route's pattern,
// carrying the request's x-request-id as http.request.id, whichever path answered it (routed,
// or ahead of the router on a listening server). The span is the active context while the
// route runs, after its body too. With tracing off nothing is exported.
import { randomBytes, randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../test/app.js';
import { bearer, createOrg, longSession, type MintedKey, mintKey } from '../../test/identity.js';
import {
  OtlpReceiver,
  type ReceivedSpan,
  SPAN_KIND,
  tracingEnv,
} from '../../test/otlp-receiver.js';
import { routedRequests } from '../../test/routed-requests.js';

const TRUST_LIST = '/.well-known/ocss/trust-list';
const PLATFORMS = '/api/v1/developer/platforms';
const TRACED = '/test/traced/:thingID';
/** How spans name that route: as the OpenAPI document writes it. */
const TRACED_PATTERN = '/test/traced/{thingID}';

/** A traceparent of a fresh trace, as a caller upstream of Haven would send it. */
function upstream() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/**
 * Routes that say which span was active while they ran: a POST whose JSON body is parsed
 * first (its stream's events run outside the request's context), and one that fails.
 */
function tracedRoutes() {
  const seen = new Map<string, { traceId: string; spanId: string } | undefined>();
  async function plugin(app: FastifyInstance) {
    app.post(
      TRACED,
      {
        schema: {
          operationId: 'testTraced',
          summary: 'Says which span was active',
          tags: ['Test'],
          params: Type.Object({ thingID: Type.String() }),
          body: Type.Object({ note: Type.String() }),
        },
      },
      async (request) => {
        await new Promise((resolve) => setImmediate(resolve));
        const active = trace.getActiveSpan()?.spanContext();
        seen.set(request.id, active && { traceId: active.traceId, spanId: active.spanId });
        return { ok: true };
      },
    );
    app.get(
      '/test/failing',
      { schema: { operationId: 'testFailing', summary: 'Fails', tags: ['Test'] } },
      async () => {
        throw new Error('broken on purpose');
      },
    );
  }
  Object.assign(plugin, { [Symbol.for('skip-override')]: true });
  return { seen, plugin };
}

/** The one SERVER span of a trace (there must be exactly one per request). */
async function serverSpanOf(receiver: OtlpReceiver, traceId: string): Promise<ReceivedSpan> {
  const [span, ...more] = await receiver.waitFor((spans) => {
    const found = spans.filter((s) => s.traceId === traceId && s.kind === SPAN_KIND.server);
    return found.length > 0 && found;
  }, `a server span in trace ${traceId}`);
  expect(more).toEqual([]);
  return span as ReceivedSpan;
}

describe('request spans', () => {
  const receiver = new OtlpReceiver();
  let t: TestApp & { baseUrl: string };
  let routed: string[];
  let seen: ReturnType<typeof tracedRoutes>['seen'];
  let key: MintedKey;
  let familyId: string;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    const requests = routedRequests();
    routed = requests.routed;
    const routes = tracedRoutes();
    seen = routes.seen;
    t = await buildListeningTestApp({
      env: tracingEnv(endpoint),
      plugins: [requests.plugin, routes.plugin],
    });
    const owner = await longSession(t);
    const org = await createOrg(t.app, owner);
    key = await mintKey(t.app, owner, org.id);
    const family = await t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/families',
      headers: bearer(key.key),
      payload: { name: 'Traced Family' },
    });
    familyId = family.json().id;
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('continues the caller’s trace for a routed request, named by the pattern', async () => {
    const caller = upstream();
    const path = `/api/v1/developer/families/${familyId}/children`;
    routed.length = 0;
    // A query string: the route's, never a fast path's.
    const res = await fetch(`${t.baseUrl}${path}?secret=s3cret`, {
      headers: { ...bearer(key.key), traceparent: caller.traceparent },
    });
    expect(res.status).toBe(200);
    expect(routed).toEqual([`${path}?secret=s3cret`]);

    const span = await serverSpanOf(receiver, caller.traceId);
    expect(span).toMatchObject({
      service: 'haven',
      parentSpanId: caller.spanId,
      name: 'GET /api/v1/developer/families/{familyID}/children',
      statusCode: 0,
    });
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/developer/families/{familyID}/children',
      'url.path': path,
      'http.response.status_code': 200,
      'http.request.id': res.headers.get('x-request-id'),
    });
    expect(JSON.stringify(span)).not.toContain('s3cret');
  });

  it('continues it for a request answered ahead of the router, with the caller’s request id', async () => {
    const etag = (await fetch(`${t.baseUrl}${TRUST_LIST}`)).headers.get('etag') as string;
    const catalog = upstream();
    const notModified = upstream();
    routed.length = 0;
    const read = await fetch(`${t.baseUrl}${PLATFORMS}`, {
      headers: { ...bearer(key.key), traceparent: catalog.traceparent },
    });
    expect(read.status).toBe(200);
    const res = await fetch(`${t.baseUrl}${TRUST_LIST}`, {
      headers: {
        'if-none-match': etag,
        traceparent: notModified.traceparent,
        'x-request-id': 'poll-17',
      },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get('x-request-id')).toBe('poll-17');
    expect(routed).toEqual(t.config.redisUrl ? [PLATFORMS] : []);

    const span = await serverSpanOf(receiver, notModified.traceId);
    expect(span).toMatchObject({
      parentSpanId: notModified.spanId,
      name: `GET ${TRUST_LIST}`,
      statusCode: 0,
    });
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': TRUST_LIST,
      'url.path': TRUST_LIST,
      'http.response.status_code': 304,
      'http.request.id': 'poll-17',
    });
    const keyed = await serverSpanOf(receiver, catalog.traceId);
    expect(keyed).toMatchObject({ parentSpanId: catalog.spanId, name: `GET ${PLATFORMS}` });
    expect(keyed.attributes['http.request.id']).toBe(read.headers.get('x-request-id'));
  });

  it('is the active span while the route runs, after its body was read', async () => {
    for (const via of ['socket', 'inject'] as const) {
      const caller = upstream();
      const url = `/test/traced/${via}`;
      const headers = { traceparent: caller.traceparent, 'content-type': 'application/json' };
      const body = JSON.stringify({ note: 'x'.repeat(200_000) });
      const requestId =
        via === 'socket'
          ? (await fetch(`${t.baseUrl}${url}`, { method: 'POST', headers, body })).headers.get(
              'x-request-id',
            )
          : (await t.app.inject({ method: 'POST', url, headers, payload: body })).headers[
              'x-request-id'
            ];
      const span = await serverSpanOf(receiver, caller.traceId);
      expect(span.name, via).toBe(`POST ${TRACED_PATTERN}`);
      expect(span.attributes['http.request.id'], via).toBe(requestId);
      expect(seen.get(String(requestId)), via).toEqual({
        traceId: caller.traceId,
        spanId: span.spanId,
      });
    }
  });

  it('starts a trace without a traceparent; marks a 5xx an error; names an unmatched path by its method', async () => {
    const failing = await fetch(`${t.baseUrl}/test/failing`, {
      headers: { 'x-request-id': 'fails-1' },
    });
    expect(failing.status).toBe(500);
    const nowhere = await fetch(`${t.baseUrl}/nowhere/${randomUUID()}`, {
      headers: { 'x-request-id': 'nowhere-1' },
    });
    expect(nowhere.status).toBe(404);

    const byId = (id: string) =>
      receiver.waitFor(
        (spans) => spans.find((s) => s.attributes['http.request.id'] === id),
        `the span of ${id}`,
      );
    const failed = await byId('fails-1');
    expect(failed).toMatchObject({
      kind: SPAN_KIND.server,
      parentSpanId: '',
      name: 'GET /test/failing',
      statusCode: 2,
    });
    expect(failed.attributes['http.response.status_code']).toBe(500);
    const unmatched = await byId('nowhere-1');
    expect(unmatched).toMatchObject({ name: 'GET', statusCode: 0 });
    expect(unmatched.attributes['http.route']).toBeUndefined();
    expect(unmatched.attributes['http.response.status_code']).toBe(404);
  });
});

describe('request spans with tracing off', () => {
  it('exports nothing and makes no span active', async () => {
    const receiver = new OtlpReceiver();
    const endpoint = await receiver.start();
    const routes = tracedRoutes();
    // Everything set but the switch: OTEL_SDK_DISABLED turns tracing off.
    const off = await buildListeningTestApp({
      env: { ...tracingEnv(endpoint), OTEL_SDK_DISABLED: 'true' },
      plugins: [routes.plugin],
    });
    const untraced = upstream();
    try {
      const headers = { traceparent: untraced.traceparent, 'content-type': 'application/json' };
      const res = await fetch(`${off.baseUrl}/test/traced/off`, {
        method: 'POST',
        headers,
        body: '{"note":"off"}',
      });
      expect(res.status).toBe(200);
      expect(routes.seen.get(res.headers.get('x-request-id') as string)).toBeUndefined();
      expect((await fetch(`${off.baseUrl}/health`, { headers })).status).toBe(200);
    } finally {
      await off.close();
    }
    // A traced app exporting to the same receiver afterwards: its span arrives, and none
    // from the app without tracing ever did.
    const on = await buildListeningTestApp({ env: tracingEnv(endpoint) });
    const traced = upstream();
    try {
      await fetch(`${on.baseUrl}/health`, { headers: { traceparent: traced.traceparent } });
      await serverSpanOf(receiver, traced.traceId);
    } finally {
      await on.close();
      await receiver.stop();
    }
    expect(receiver.spans.filter((s) => s.traceId === untraced.traceId)).toEqual([]);
    expect(receiver.rejected).toEqual([]);
  });
});
