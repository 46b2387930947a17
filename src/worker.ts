// `npm run worker`: a process that only runs background jobs (enforcement, webhook
// deliveries), beside API processes started with WORKERS=off. It answers /metrics and the
// probes on WORKER_PORT (health/worker-listener.ts). Several may run at once on
// PostgreSQL; pg-boss hands each job to exactly one of them. Embedded storage has one owner,
// so on PGlite this runs only while no server holds DATA_DIR.
import pino from 'pino';
import { systemClock } from './clock.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openStorage } from './db/storage.js';
import { logDestination, loggerOptions } from './http/request-log.js';
import { startWorkerListener } from './modules/health/worker-listener.js';
import { closeServices, createServices } from './modules/wiring.js';
import { createTelemetry } from './telemetry/telemetry.js';

function fail(message: string): never {
  process.stderr.write(`haven worker: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = { ...loadConfig(), workers: 'inline' };
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : String(error));
  }
  // The stream as a second argument: pino takes no stream among its options, and would open
  // stdout a second time beside the log writer's thread.
  const log = pino(loggerOptions(config.logLevel) as pino.LoggerOptions, logDestination());
  const storage = await openStorage(config).catch((error: Error) => fail(error.message));
  storage.onIdleError((error) => log.warn({ err: error }, 'database connection lost'));
  const telemetry = createTelemetry(config);
  telemetry.metrics.watchPool(() => storage.database.poolState());
  const services = await createServices(
    config,
    {
      db: storage.database.db,
      clock: systemClock,
      notifications: storage.database.notifications,
      telemetry,
    },
    log,
    storage.database.backend === 'postgres',
  );
  // Listening before any job is taken: a port in use stops the start, not a running worker.
  const listener = await startWorkerListener({
    config,
    ping: storage.database.ping,
    metrics: telemetry.metrics,
    clock: systemClock,
    log,
  }).catch((error: Error) => fail(`WORKER_PORT ${config.workerPort}: ${error.message}`));
  await services.jobs.start();
  log.info(
    { storage: storage.description, url: listener.url },
    `Haven worker running on ${listener.url} (metrics and probes)`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    // Not ready first, so whatever watches the probe sees the stop before the jobs end.
    listener.announceStop();
    log.info({ signal }, 'worker shutting down: finishing jobs in hand');
    try {
      await closeServices(services);
      await listener.close();
      await storage.close();
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'worker shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `haven worker: failed to start: ${(error as Error)?.stack ?? String(error)}\n`,
  );
  process.exit(1);
});
