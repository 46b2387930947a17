// A few reads are answered before Fastify routes the request: the conditional GET that
// every federation member polls (If-None-Match on the trust list) costs a string compare and
// a 304, and routing, hooks and a log line per request would multiply that cost (measured by
// `npm run bench`). A fast path answers only what it fully understands and hands everything
// else to Fastify untouched; it still sets the headers every response carries.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { context } from '@opentelemetry/api';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
import { rateLimitHeaders } from '../ratelimit/plugin.js';
import type { WindowDecision } from '../ratelimit/sliding-window.js';
import { CLIENT_CLOSED } from '../telemetry/metrics.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { type AccessLog, pathOf } from './access-log.js';
import { CORS_EXPOSED_HEADERS } from './cors.js';
import { classifyError, failureToAnswer } from './error-handler.js';
import { errorEnvelope } from './errors.js';
import { lingerOnEarlyAnswers } from './lingering-close.js';
import { requestIdFor } from './request-log.js';
import { endRequestSpan, startRequestSpan } from './request-tracing.js';

/**
 * Writes a fast path's answer with the headers every response carries (the request id,
 * nosniff and the CORS pair that the Fastify hooks set on the other path) added to its own,
 * and returns the request id (see FastPath). `own` is a fresh object of the caller's, and
 * the common headers are written into it.
 */
export function answerFast(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  own: Record<string, string | number>,
  body?: string | Buffer,
  requestId = requestIdFor(request),
): string {
  // Not `{ ...own, 'x-request-id': … }`: on Node 20's V8 each property added after a
  // leading spread takes the runtime's slow path (the four cost ~6 µs a call in a loop on
  // the bench VM, a quarter of the trust list's 304; docs/decisions.md "Spreads on the hot
  // paths"). Written into the caller's fresh literal they follow cached transitions (~0.1
  // µs for the four). All four are written on every call, so no answer keeps another's.
  own['x-request-id'] = requestId;
  own['x-content-type-options'] = 'nosniff';
  own['access-control-allow-origin'] = '*';
  own['access-control-expose-headers'] = CORS_EXPOSED_HEADERS;
  response.writeHead(status, own);
  response.end(body);
  return requestId;
}

/**
 * A metered route's answer from a fast path: its rate-limit headers, a JSON body, and
 * `Connection: close` while draining (as the drain's onSend hook does, so the client opens
 * a new connection next time). Returns the request id.
 */
export function answerMetered(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  decision: WindowDecision,
  body: string | Buffer,
  draining: boolean,
  requestId: string,
): string {
  // Added to the fresh object, not spread into a new one (see answerFast).
  const headers: Record<string, string | number> = rateLimitHeaders(decision);
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (draining) {
    headers.connection = 'close';
  }
  return answerFast(request, response, status, headers, body, requestId);
}

/**
 * A failure as the error handler answers it (the same status, envelope and log line),
 * serialized by the route's serializer for its status.
 */
export function failureAnswer(
  error: Error,
  log: FastifyBaseLogger,
  requestId: string,
  serializerFor: (status: number) => (payload: unknown) => string,
): { status: number; body: string } {
  const failure = failureToAnswer(error, classifyError(error), log.child({ reqId: requestId }));
  return {
    status: failure.status,
    body: serializerFor(failure.status)(
      errorEnvelope(failure.status, failure.message, failure.extra),
    ),
  };
}

/**
 * Answers the request and returns the request id it answered with (its access line names
 * it), or returns false without touching the request. A path that answers after a read
 * returns a promise of the request id instead: it has taken the request and answers every
 * outcome of it itself (failures in the house envelope). A path that reads the request's
 * body may settle that promise with false: it answered nothing and kept the body for the
 * route (http/kept-body.ts), which then answers as if it had read it; and it rejects only
 * when the client went away before its body ended: the connection is closed, with nothing
 * to answer or log.
 */
export type FastPath = (
  request: IncomingMessage,
  response: ServerResponse,
) => string | false | Promise<string | false>;

/** A fast path and the route it answers for (its access lines and metrics name it). */
export interface FastPathHandler {
  /**
   * The route's pattern. Absent for paths that answer routes without parameters only: the
   * route is then the path (never a raw path with an id: metrics label by it).
   */
  route?: string;
  path: FastPath;
}

/**
 * The server every request enters: each fast path is offered the request in turn, and one
 * that answers gets what a routed request gets (request-telemetry.ts): its count and duration
 * under the route's pattern, its span, its access line (the registry does it, so no path can
 * forget); the rest go to Fastify.
 */
export function createFastPaths(access: AccessLog, telemetry: Telemetry) {
  const handlers: FastPathHandler[] = [];
  const { metrics, tracing } = telemetry;
  /** What a request a fast path answered leaves behind (one function, not a closure a request). */
  function answered(
    request: IncomingMessage,
    response: ServerResponse,
    handler: FastPathHandler,
    arrived: number,
    requestId: string,
  ): void {
    const route = handler.route ?? pathOf(request.url as string);
    const ms = performance.now() - arrived;
    const status = response.statusCode;
    metrics.request(request.method as string, route, status, ms / 1000);
    if (tracing.enabled) {
      endRequestSpan(tracing, request, route, status, requestId);
    }
    if (access.enabled) {
      access.write({
        reqId: requestId,
        method: request.method as string,
        route,
        url: request.url as string,
        status,
        ms,
      });
    }
  }
  /**
   * A request whose client went away before a fast path could answer it: counted as a routed
   * one is (request-telemetry.ts), with no access line (a routed one gets none either).
   */
  function abandoned(
    request: IncomingMessage,
    handler: FastPathHandler,
    arrived: number,
    requestId = requestIdFor(request),
  ): void {
    const route = handler.route ?? pathOf(request.url as string);
    metrics.request(
      request.method as string,
      route,
      CLIENT_CLOSED,
      (performance.now() - arrived) / 1000,
    );
    if (tracing.enabled) {
      endRequestSpan(tracing, request, route, CLIENT_CLOSED, requestId);
    }
  }
  const serverFactory: FastifyServerFactory = (handler) => {
    function offer(request: IncomingMessage, response: ServerResponse): void {
      const arrived = performance.now();
      for (const fastPath of handlers) {
        const answer = fastPath.path(request, response);
        if (answer === false) {
          continue;
        }
        if (typeof answer === 'string') {
          answered(request, response, fastPath, arrived, answer);
        } else {
          // Rejected: a client gone mid-body (see FastPath); the connection must not hang.
          answer.then(
            (requestId) => {
              if (requestId === false) {
                handler(request, response);
              } else if (response.destroyed) {
                // Its client left while the answer was being made: nothing reached it.
                abandoned(request, fastPath, arrived, requestId);
              } else {
                answered(request, response, fastPath, arrived, requestId);
              }
            },
            () => {
              abandoned(request, fastPath, arrived);
              response.destroy();
            },
          );
        }
        return;
      }
      handler(request, response);
    }
    /** With tracing on: the request's span is started here and active while it is served. */
    function offerTraced(request: IncomingMessage, response: ServerResponse): void {
      context.with(startRequestSpan(tracing, request), offer, undefined, request, response);
    }
    // Chosen once: with tracing off, a request pays no check for it on the way in.
    const server = createServer(tracing.enabled ? offerTraced : offer);
    lingerOnEarlyAnswers(server);
    return server;
  };
  return {
    serverFactory,
    add(handler: FastPathHandler): void {
      handlers.push(handler);
    },
  };
}
