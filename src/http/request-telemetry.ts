// What a routed request leaves in the metrics and traces (CONTRACT.md §13): one count and one
// duration under its route's pattern (UNMATCHED_ROUTE when none matched), and, with tracing
// on, its SERVER span named after that pattern. Requests the fast paths answer ahead of the
// router are counted the same way by the fast-path server (fast-path.ts).
//
// A request is counted when its answer is written (onResponse). A client that goes away
// first never gets there: Fastify runs no onResponse for it (nor its onRequestAbort once the
// body was in), so the response's `close` counts it, as 499, and ends its span; a slow route
// its clients give up on must not vanish from the figures.
//
// The span must be the active context while the route runs, so that what the route starts
// (a job's trace carrier, a partner call's span) is its child. The fast-path server runs
// Fastify inside it already; app.inject() does not pass there, so the first onRequest hook
// makes it active. The body arrives in the request stream's events, outside the request's
// async context: Fastify hands the parsed body on in the request's context (an AsyncResource),
// and the span is made active again before validation all the same, so a parser or hook that
// loses the context cannot take the route's children out of the trace.
import { context } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CLIENT_CLOSED, UNMATCHED_ROUTE } from '../telemetry/metrics.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { isInternalCall } from './internal-calls.js';
import { endRequestSpan, requestSpanContext } from './request-tracing.js';

/**
 * Registered before any hook that may answer in onRequest (the drain's 503, CORS preflight,
 * the rate limit's 429), so every routed request passes here. Callback-style hooks: they run
 * on every request and skip the promise an async hook costs.
 */
export function installRequestTelemetry(app: FastifyInstance, telemetry: Telemetry): void {
  const { metrics, tracing } = telemetry;
  const traced = tracing.enabled;

  function answered(request: FastifyRequest, status: number, seconds: number): void {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    // A tool call's REST request (the MCP server calling its own route) is the /mcp request
    // that made it, already counted; its span stays, a child of that request's.
    if (!isInternalCall(request)) {
      metrics.request(request.method, route, status, seconds);
    }
    if (traced) {
      endRequestSpan(tracing, request.raw, route, status, request.id);
    }
  }

  app.addHook('onRequest', (request, reply, done) => {
    const response = reply.raw;
    response.on('close', () => {
      // Not ended: no answer was given (an ended one was counted by onResponse, or is on its
      // way there).
      if (!response.writableEnded) {
        answered(request, CLIENT_CLOSED, reply.elapsedTime / 1000);
      }
    });
    if (traced) {
      context.with(requestSpanContext(tracing, request.raw), done);
      return;
    }
    done();
  });
  if (traced) {
    app.addHook('preValidation', (request, _reply, done) => {
      context.with(requestSpanContext(tracing, request.raw), done);
    });
  }
  app.addHook('onResponse', (request, reply, done) => {
    answered(request, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * An answer Fastify gives before routing (a malformed URL, through `frameworkErrors`), where
 * no hook runs: counted and traced as unmatched. `startedAt` is performance.now() when the
 * answer began.
 */
export function answeredBeforeRouting(
  telemetry: Telemetry,
  request: FastifyRequest,
  reply: FastifyReply,
  startedAt: number,
): void {
  const status = reply.statusCode;
  telemetry.metrics.request(
    request.method,
    UNMATCHED_ROUTE,
    status,
    (performance.now() - startedAt) / 1000,
  );
  if (telemetry.tracing.enabled) {
    endRequestSpan(telemetry.tracing, request.raw, UNMATCHED_ROUTE, status, request.id);
  }
}
