// GET /health answered ahead of Fastify (see http/fast-path.ts) while the last database
// ping is fresh (under a second old) and said `ok`, and the instance is not stopping: load
// balancers probe it constantly, and routing, hooks and a log line per probe would cost many
// times the answer. Anything else (a stale or failed ping, stopping, HEAD, a query string)
// goes through the route, which pings and so refreshes what this path reads.
import type { FastPathHandler } from '../../http/fast-path.js';
import { fixedAnswer } from './probe-fast-path.js';
import type { HealthService } from './service.js';

const HEALTH_PATH = '/health';

export function healthFastPath(options: {
  health: Pick<HealthService, 'freshStatus'>;
  environment: string;
  /** From SIGTERM on (the shutdown delay included), /health answers `draining`. */
  stopping(): boolean;
}): FastPathHandler {
  return fixedAnswer(
    HEALTH_PATH,
    { status: 'ok', environment: options.environment, database: 'ok' },
    () => options.health.freshStatus() === 'ok' && !options.stopping(),
  );
}
