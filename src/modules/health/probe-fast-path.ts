// The probes answered ahead of Fastify (see http/fast-path.ts), as /health is (fast-path.ts
// here): orchestrators and load balancers ask them every few seconds per instance, and
// routing, hooks and a log line per probe would cost many times the answer. Liveness always
// (its answer never changes); readiness only while the last pings are fresh and said ok and
// the process is not stopping. Anything else (a stale or failed ping, stopping, HEAD, a query
// string) goes through the route, which pings and so refreshes what this path reads.
import { answerFast, type FastPathHandler } from '../../http/fast-path.js';
import { LIVE_PATH, READY_PATH } from './probe-routes.js';
import type { Readiness } from './readiness.js';

/** A fixed JSON answer for one exact GET path, when `ready()` says it holds. */
export function fixedAnswer(path: string, value: unknown, ready: () => boolean): FastPathHandler {
  // The route's 200 body, in its schema's field order, serialised once.
  const body = JSON.stringify(value);
  const length = Buffer.byteLength(body);
  return {
    route: path,
    path(request, response) {
      if (request.url !== path || request.method !== 'GET' || !ready()) {
        return false;
      }
      return answerFast(
        request,
        response,
        200,
        { 'content-type': 'application/json; charset=utf-8', 'content-length': length },
        body,
      );
    },
  };
}

export function probeFastPaths(options: {
  readiness: Pick<Readiness, 'freshlyReady'>;
  redisConfigured: boolean;
}): FastPathHandler[] {
  const readyBody = {
    status: 'ok',
    checks: {
      database: 'ok',
      redis: options.redisConfigured ? 'ok' : 'not_configured',
      draining: false,
    },
  };
  return [
    fixedAnswer(LIVE_PATH, { status: 'ok' }, () => true),
    fixedAnswer(READY_PATH, readyBody, () => options.readiness.freshlyReady()),
  ];
}
