// A few reads are answered before Fastify routes the request: the conditional GET that
// every federation member polls (If-None-Match on the trust list) costs a string compare and
// a 304, and routing, hooks and a log line per request would multiply that cost (measured by
// `npm run bench`). A fast path answers only what it fully understands and hands everything
// else to Fastify untouched; it still sets the headers every response carries.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import { CORS_EXPOSED_HEADERS } from './cors.js';
import { lingerOnEarlyAnswers } from './lingering-close.js';
import { requestIdFor } from './request-log.js';

/**
 * The headers every response carries (the request id, nosniff and the CORS pair that the
 * Fastify hooks set on the other path), plus the fast path's own.
 */
export function fastPathHeaders(
  request: IncomingMessage,
  own: Record<string, string | number>,
): Record<string, string | number> {
  return {
    ...own,
    'x-request-id': requestIdFor(request),
    'x-content-type-options': 'nosniff',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS_EXPOSED_HEADERS,
  };
}

/** Answers the request and returns true, or returns false without touching it. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

export function createFastPaths() {
  const paths: FastPath[] = [];
  const serverFactory: FastifyServerFactory = (handler) => {
    const server = createServer((request, response) => {
      for (const path of paths) {
        if (path(request, response)) {
          return;
        }
      }
      handler(request, response);
    });
    lingerOnEarlyAnswers(server);
    return server;
  };
  return {
    serverFactory,
    add(path: FastPath): void {
      paths.push(path);
    },
  };
}
