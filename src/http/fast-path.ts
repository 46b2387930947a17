// A few reads are answered before Fastify routes the request: the conditional GET that
// every federation member polls (If-None-Match on the trust list) costs a string compare and
// a 304, and routing, hooks and a log line per request would multiply that cost (measured by
// `npm run bench`). A fast path answers only what it fully understands and hands everything
// else to Fastify untouched; it still sets the headers every response carries.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import { lingerOnEarlyAnswers } from './lingering-close.js';

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
