// Request ids and the one log line per request. Secrets never reach the log: headers that
// carry credentials and body fields that hold secrets are redacted, and only the path of a
// URL (never its query) is written.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { LogLevel } from '../config.js';

const CALLER_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** A caller's own X-Request-Id is echoed when it is 1-128 visible ASCII characters. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CALLER_REQUEST_ID.test(given) ? given : randomUUID();
}

const SECRET_FIELDS = [
  'authorization',
  'password',
  'secret',
  'token',
  'key',
  'plain',
  'device_key',
  'access_token',
  'refresh_token',
  'client_secret',
  'credentials',
  'code',
];

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-device-key"]',
  'req.headers.signature',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
];

/**
 * Where log lines go: stdout, written asynchronously (lines queue in memory while a write is
 * in flight and leave together), so a request never waits on the log's reader. pino flushes
 * what is queued when the process exits.
 */
export function logDestination(): NodeJS.WritableStream {
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: 0,
  }) as unknown as NodeJS.WritableStream;
}

export function loggerOptions(
  level: LogLevel,
  stream: NodeJS.WritableStream = logDestination(),
): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; id: string }) => ({
        id: request.id,
        method: request.method,
        path: request.url.split('?')[0],
      }),
    },
    stream,
  } as FastifyServerOptions['logger'];
}

/** The URL without its query (which may carry anything a caller put there). */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The access line's own logger, on the same stream as the app's. Its fields are chosen here
 * (method, route, path without the query, status, time), none can hold a secret, so it skips
 * the redaction pass the app logger makes over every object: that pass was the largest part
 * of the line's cost (`node --cpu-prof` on the catalog read).
 */
function accessLogger(level: LogLevel, stream: NodeJS.WritableStream) {
  return pino({ level }, stream);
}

// Hooks here are callback-style: they run on every request, and skip the promise an async
// hook costs.
export function installRequestLog(
  app: FastifyInstance,
  log: { level: LogLevel; stream: NodeJS.WritableStream },
): void {
  const access = accessLogger(log.level, log.stream);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  if (!access.isLevelEnabled('info')) {
    return;
  }
  app.addHook('onResponse', (request, reply, done) => {
    access.info(
      {
        reqId: request.id,
        method: request.method,
        route: request.routeOptions.url ?? null,
        path: pathOf(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request completed',
    );
    done();
  });
}
