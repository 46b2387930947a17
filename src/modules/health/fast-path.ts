// GET /health answered ahead of Fastify (see http/fast-path.ts) while the last database
// ping is fresh (under a second old) and said `ok`, and the instance is not draining: load
// balancers probe it constantly, and routing, hooks and a log line per probe would cost many
// times the answer. Anything else (a stale or failed ping, draining, HEAD, a query string)
// goes through the route, which pings and so refreshes what this path reads. Probes answered
// here are counted in a line a minute instead of a line each.
import type { FastifyBaseLogger } from 'fastify';
import { type FastPath, fastPathHeaders } from '../../http/fast-path.js';
import type { HealthService } from './service.js';

const HEALTH_PATH = '/health';
const REPORT_EVERY_MS = 60_000;

export function healthFastPath(options: {
  health: Pick<HealthService, 'freshStatus'>;
  environment: string;
  draining(): boolean;
  log: FastifyBaseLogger;
}): { path: FastPath; close(): void } {
  // The route's 200 body, in its schema's field order, serialised once.
  const body = JSON.stringify({
    status: 'ok',
    environment: options.environment,
    database: 'ok',
  });
  const length = Buffer.byteLength(body);
  let answered = 0;
  const report = () => {
    if (answered > 0) {
      options.log.info({ route: HEALTH_PATH, status: 200, count: answered }, 'health probes');
      answered = 0;
    }
  };
  const timer = setInterval(report, REPORT_EVERY_MS).unref();
  return {
    path(request, response) {
      if (
        request.url !== HEALTH_PATH ||
        request.method !== 'GET' ||
        options.health.freshStatus() !== 'ok' ||
        options.draining()
      ) {
        return false;
      }
      response.writeHead(
        200,
        fastPathHeaders(request, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': length,
        }),
      );
      response.end(body);
      answered++;
      return true;
    },
    close() {
      clearInterval(timer);
      report();
    },
  };
}
