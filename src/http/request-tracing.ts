// A request's SERVER span (CONTRACT.md §13), one per request whichever path answers it. It is
// started where the request enters (the fast-path server, or Fastify's first hook when no
// server of ours saw it: app.inject()), continuing an incoming W3C `traceparent`, and kept on
// the Node request, so a request a fast path hands to Fastify keeps the span it began with.
// It is named and ended once the route that answered is known: `GET /api/v1/families/{familyID}`
// (the pattern as the metrics' labels and the OpenAPI document write it), never the raw path. None of this runs when tracing is off: callers check `enabled` once.
import type { IncomingMessage } from 'node:http';
import { type Context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { endpointPattern } from '../modules/usage/recorder.js';
import { UNMATCHED_ROUTE } from '../telemetry/metrics.js';
import type { Tracing } from '../telemetry/tracing.js';
import { pathOf } from './access-log.js';

const SPAN = Symbol('haven.requestSpan');

interface RequestSpan {
  span: Span;
  context: Context;
}

type WithSpan = IncomingMessage & { [SPAN]?: RequestSpan };

/** Starts the request's span (once) and returns the context it is active in. */
export function startRequestSpan(tracing: Tracing, request: IncomingMessage): Context {
  const held = request as WithSpan;
  const existing = held[SPAN];
  if (existing !== undefined) {
    return existing.context;
  }
  const parent = tracing.extract(request.headers);
  const method = request.method as string;
  // Named by the method until the route is known (the name OpenTelemetry gives a span whose
  // route is unknown).
  const span = tracing.tracer.startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.path': pathOf(request.url as string),
      },
    },
    parent,
  );
  const context = trace.setSpan(parent, span);
  held[SPAN] = { span, context };
  return context;
}

/** The context of the request's span, started if no one started it yet. */
export function requestSpanContext(tracing: Tracing, request: IncomingMessage): Context {
  return (request as WithSpan)[SPAN]?.context ?? startRequestSpan(tracing, request);
}

/**
 * Names and ends the request's span: `route` is the pattern that answered (UNMATCHED_ROUTE
 * when none did), `status` what was answered. Ends it once, whoever calls.
 */
export function endRequestSpan(
  tracing: Tracing,
  request: IncomingMessage,
  route: string,
  status: number,
  requestId: string,
): void {
  requestSpanContext(tracing, request);
  const held = (request as WithSpan)[SPAN] as RequestSpan;
  const span = held.span;
  if (!span.isRecording()) {
    return;
  }
  if (route !== UNMATCHED_ROUTE) {
    const pattern = endpointPattern(route);
    span.updateName(`${request.method} ${pattern}`);
    span.setAttribute('http.route', pattern);
  }
  span.setAttribute('http.response.status_code', status);
  span.setAttribute('http.request.id', requestId);
  if (status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
