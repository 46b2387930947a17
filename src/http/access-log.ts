// The access line: one per request, on every path (the routed one and the fast paths ahead
// of Fastify), in the shape pino gives the app's own lines. Its fields are fixed and none can
// hold a secret (the path is written without its query), so the line is built here as a
// string and handed to the log stream: no logger object, no serializers, no redaction pass.
// Measured on the catalog read that was the largest part of the line's cost (pino's object
// serialisation ~5 µs a line against ~1 µs for this).
import { hostname } from 'node:os';
import type { LogLevel } from '../config.js';

/** pino's numeric levels: a line at `info` is written when the configured level allows it. */
const LEVELS: Record<LogLevel, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};
const INFO = 30;

export interface AccessEntry {
  reqId: string;
  method: string;
  /** The route's pattern (`/families/:familyId`), null when no route matched. */
  route: string | null;
  /** The request URL; only its path is written. */
  url: string;
  status: number;
  /** Milliseconds from the request's arrival to its answer. */
  ms: number;
}

export interface AccessLog {
  /** False when the level leaves access lines out: callers skip building the entry. */
  readonly enabled: boolean;
  write(entry: AccessEntry): void;
}

/** The URL without its query (which may carry anything a caller put there). */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function createAccessLog(level: LogLevel, stream: NodeJS.WritableStream): AccessLog {
  const enabled = LEVELS[level] <= INFO;
  // pino's base fields, the same on every line of this process.
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  return {
    enabled,
    write(entry) {
      if (!enabled) {
        return;
      }
      const route = entry.route === null ? 'null' : JSON.stringify(entry.route);
      stream.write(
        `{"level":${INFO},"time":${Date.now()}${base},"reqId":${JSON.stringify(entry.reqId)},` +
          `"method":${JSON.stringify(entry.method)},"route":${route},` +
          `"path":${JSON.stringify(pathOf(entry.url))},"status":${entry.status},` +
          `"ms":${Math.round(entry.ms * 100) / 100},"msg":"request completed"}\n`,
      );
    },
  };
}
