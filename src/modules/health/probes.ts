// The probes of one process (API or worker): its readiness, their routes and, where the
// process has fast paths (the API), the answers given ahead of the router.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import type { FastPathHandler } from '../../http/fast-path.js';
import { probeFastPaths } from './probe-fast-path.js';
import { probeRoutes } from './probe-routes.js';
import { createReadiness, type Readiness } from './readiness.js';
import type { HealthService } from './service.js';

export async function registerProbes(
  app: FastifyInstance,
  options: {
    health: HealthService;
    redisUrl: string | undefined;
    clock: Clock;
    stopping(): boolean;
    addFastPath?(handler: FastPathHandler): void;
  },
): Promise<Readiness> {
  const readiness = createReadiness({
    database: options.health,
    redisUrl: options.redisUrl,
    clock: options.clock,
    stopping: options.stopping,
  });
  app.addHook('onClose', () => readiness.close());
  await app.register(probeRoutes(readiness));
  const redisConfigured = options.redisUrl !== undefined;
  for (const handler of probeFastPaths({ readiness, redisConfigured })) {
    options.addFastPath?.(handler);
  }
  return readiness;
}
