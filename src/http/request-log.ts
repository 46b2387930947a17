// Request ids and the one log line per request. Secrets never reach the log: headers that
// carry credentials and body fields that hold secrets are redacted, and only the path of a
// URL (never its query) is written.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { LogLevel } from '../config.js';
import { type AccessLog, pathOf } from './access-log.js';
import { LogWriter } from './log-writer.js';

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

let stdout: LogWriter | undefined;

/**
 * Where log lines go: stdout, written by a thread of their own (log-writer.ts), so a request
 * never waits on the log's reader or pays for the line's writing. One per process, whatever
 * number of apps it builds; what is waiting is written when the process exits.
 */
export function logDestination(): LogWriter {
  stdout ??= new LogWriter();
  return stdout;
}

export function loggerOptions(
  level: LogLevel,
  stream: LogWriter = logDestination(),
): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; id: string }) => ({
        id: request.id,
        method: request.method,
        path: pathOf(request.url),
      }),
    },
    stream,
  } as FastifyServerOptions['logger'];
}

// Hooks here are callback-style: they run on every request, and skip the promise an async
// hook costs.
export function installRequestLog(app: FastifyInstance, access: AccessLog): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  if (!access.enabled) {
    return;
  }
  app.addHook('onResponse', (request, reply, done) => {
    access.write({
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      url: request.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
    });
    done();
  });
}
