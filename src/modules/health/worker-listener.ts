// What `npm run worker` answers over HTTP (WORKER_PORT): GET /metrics, by the same rules as
// the API's, and the probes /health/live and /health/ready (database, Redis, stopping). A
// worker takes no requests of the API's, so this is a small Fastify instance of its own:
// the house error envelope, no request log line (Prometheus scrapes it every few seconds),
// nothing else of the API's hooks.
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { DatabaseHandle } from '../../db/connect.js';
import { installErrorHandler } from '../../http/error-handler.js';
import type { Metrics } from '../../telemetry/metrics.js';
import { metricsRoutes } from './metrics-routes.js';
import { registerProbes } from './probes.js';
import { createHealthService } from './service.js';

export interface WorkerListener {
  /** Where it listens, e.g. http://127.0.0.1:8081 (the port picked when WORKER_PORT=0). */
  url: string;
  /** From now on /health/ready answers 503 (draining: true); /metrics still answers. */
  announceStop(): void;
  close(): Promise<void>;
}

export async function startWorkerListener(options: {
  config: Pick<Config, 'host' | 'workerPort' | 'redisUrl' | 'appEnv' | 'metricsTokens'>;
  ping: DatabaseHandle['ping'];
  metrics: Pick<Metrics, 'exposition' | 'contentType'>;
  clock: Clock;
  log: FastifyBaseLogger;
}): Promise<WorkerListener> {
  const { config } = options;
  const app = Fastify({
    loggerInstance: options.log,
    logController: new LogController({ disableRequestLogging: true }),
  });
  installErrorHandler(app);
  let stopping = false;
  await registerProbes(app, {
    health: createHealthService({ ping: options.ping, clock: options.clock }),
    redisUrl: config.redisUrl,
    clock: options.clock,
    stopping: () => stopping,
  });
  await app.register(
    metricsRoutes(options.metrics, { appEnv: config.appEnv, tokens: config.metricsTokens }),
  );
  await app.listen({ port: config.workerPort, host: config.host });
  const { address, port } = app.server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    announceStop() {
      stopping = true;
    },
    close: () => app.close(),
  };
}
