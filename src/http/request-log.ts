// Request ids and the one log line per request. Secrets never reach the log: headers that
// carry credentials and body fields that hold secrets are redacted, and only the path of a
// URL (never its query) is written.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { LogLevel } from '../config.js';
import { type AccessLog, pathOf } from './access-log.js';

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

/** Lines wait at most this long for company before they are handed over. */
const BATCH_MS = 50;
/** ...or until this many characters are waiting. */
const BATCH_CHARS = 16 * 1024;

/**
 * Lines are joined and handed to sonic-boom in batches (16 KB, or whatever is waiting after
 * 50 ms), not one by one. sonic-boom measures its whole pending buffer (`Buffer.byteLength`
 * of up to 16 KB) on every write while a write is in flight, and each write it starts is a
 * round trip through libuv's thread pool: under load a line cost ~2.4 µs handed over alone
 * against ~0.7 µs in a batch (a million lines to /dev/null), and fewer, larger writes leave
 * the request thread alone. At exit the waiting lines are handed over before pino's own exit
 * hook writes sonic-boom's queue out synchronously; a SIGKILL can lose the last 50 ms of
 * lines, never an acknowledged write (those are in the database).
 */
function batched(open: () => NodeJS.WritableStream): NodeJS.WritableStream {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  // Registered before sonic-boom exists, so before pino's exit hook for it: runs first.
  process.once('exit', () => flush());
  const destination = open();
  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    if (pending !== '') {
      const lines = pending;
      pending = '';
      destination.write(lines);
    }
  }
  return {
    write(line: string): boolean {
      pending += line;
      if (pending.length >= BATCH_CHARS) {
        flush();
      } else if (timer === undefined) {
        timer = setTimeout(flush, BATCH_MS).unref();
      }
      return true;
    },
  } as NodeJS.WritableStream;
}

let stdout: NodeJS.WritableStream | undefined;

/**
 * Where log lines go: stdout, written asynchronously (lines queue in memory while a write is
 * in flight and leave together), so a request never waits on the log's reader. One per
 * process, whatever number of apps it builds. pino flushes what is queued when the process
 * exits.
 */
export function logDestination(): NodeJS.WritableStream {
  stdout ??= batched(
    () =>
      pino.destination({
        dest: 1,
        sync: false,
        minLength: 0,
      }) as unknown as NodeJS.WritableStream,
  );
  return stdout;
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
