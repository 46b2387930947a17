// A few reads are answered before Fastify routes the request: the conditional GET that
// every federation member polls (If-None-Match on the trust list) costs a string compare and
// a 304, and routing, hooks and a log line per request would multiply that cost (measured by
// `npm run bench`). A fast path answers only what it fully understands and hands everything
// else to Fastify untouched; it still sets the headers every response carries.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
import { rateLimitHeaders } from '../ratelimit/plugin.js';
import type { WindowDecision } from '../ratelimit/sliding-window.js';
import { type AccessLog, pathOf } from './access-log.js';
import { CORS_EXPOSED_HEADERS } from './cors.js';
import { classifyError, failureToAnswer } from './error-handler.js';
import { errorEnvelope } from './errors.js';
import { lingerOnEarlyAnswers } from './lingering-close.js';
import { requestIdFor } from './request-log.js';

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

/** A fast path and the route it answers for (its access lines name it). */
export interface FastPathHandler {
  /** Absent for paths that answer routes without parameters: the route is the path. */
  route?: string;
  path: FastPath;
}

/**
 * The server every request enters: each fast path is offered the request in turn, and one
 * that answers gets the same access line a routed request gets (the registry writes it, so
 * no path can forget); the rest go to Fastify.
 */
export function createFastPaths(access: AccessLog) {
  const handlers: FastPathHandler[] = [];
  /** The access line of a request a fast path answered (one function, not a closure a request). */
  function logAccess(
    request: IncomingMessage,
    response: ServerResponse,
    route: string | undefined,
    arrived: number,
    requestId: string,
  ): void {
    if (!access.enabled) {
      return;
    }
    access.write({
      reqId: requestId,
      method: request.method as string,
      route: route ?? pathOf(request.url as string),
      url: request.url as string,
      status: response.statusCode,
      ms: performance.now() - arrived,
    });
  }
  const serverFactory: FastifyServerFactory = (handler) => {
    const server = createServer((request, response) => {
      const arrived = performance.now();
      for (const { route, path } of handlers) {
        const answered = path(request, response);
        if (answered === false) {
          continue;
        }
        if (typeof answered === 'string') {
          logAccess(request, response, route, arrived, answered);
        } else {
          // Rejected: a client gone mid-body (see FastPath); the connection must not hang.
          answered.then(
            (requestId) =>
              requestId === false
                ? handler(request, response)
                : logAccess(request, response, route, arrived, requestId),
            () => response.destroy(),
          );
        }
        return;
      }
      handler(request, response);
    });
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
