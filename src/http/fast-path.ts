// A few reads are answered before Fastify routes the request: the conditional GET that
// every federation member polls (If-None-Match on the trust list) costs a string compare and
// a 304, and routing, hooks and a log line per request would multiply that cost (measured by
// `npm run bench`). A fast path answers only what it fully understands and hands everything
// else to Fastify untouched; it still sets the headers every response carries.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
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

const TALLY_EVERY_MS = 60_000;

/**
 * What a fast path answered, by status, written as a line a minute (and at close) instead of
 * the access line per request it skips: that line would cost more than the answer.
 */
export function createAnswerTally(log: FastifyBaseLogger, route: string, message: string) {
  const counts = new Map<number, number>();
  const report = () => {
    for (const [status, count] of counts) {
      log.info({ route, status, count }, message);
    }
    counts.clear();
  };
  const timer = setInterval(report, TALLY_EVERY_MS).unref();
  return {
    count(status: number): void {
      counts.set(status, (counts.get(status) ?? 0) + 1);
    },
    close(): void {
      clearInterval(timer);
      report();
    },
  };
}

/** Answers the request and returns true, or returns false without touching it. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

/** A fast path and what to do when the server closes (write its last tally). */
export interface FastPathHandler {
  path: FastPath;
  close(): void;
}

export function createFastPaths() {
  const handlers: FastPathHandler[] = [];
  const serverFactory: FastifyServerFactory = (handler) => {
    const server = createServer((request, response) => {
      for (const { path } of handlers) {
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
    add(handler: FastPathHandler): void {
      handlers.push(handler);
    },
    close(): void {
      for (const handler of handlers) {
        handler.close();
      }
    },
  };
}
