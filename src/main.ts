// Process entry: config -> storage -> migrations -> app -> listen -> graceful stop.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { collectStartupGarbage } from './collect-startup-garbage.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openStorage } from './db/storage.js';
import { createTelemetry } from './telemetry/telemetry.js';

const SHUTDOWN_GRACE_MS = 10_000;

function fail(message: string): never {
  process.stderr.write(`haven: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : String(error));
  }

  const storage = await openStorage(config).catch((error: Error) => fail(error.message));
  const app = await buildApp(config, {
    database: storage.database,
    // The bench's switch (bench/audit-cost.ts): the same build without audit entries, to
    // measure what the log costs. Not a setting: no deployment runs without its log.
    ...(process.env.HAVEN_BENCH_AUDIT_LOG === 'off' ? { tuning: { auditLog: false } } : {}),
    // Likewise bench/telemetry-cost.ts: the same build recording no metrics.
    telemetry: createTelemetry(config, {
      metrics: { enabled: process.env.HAVEN_BENCH_METRICS !== 'off' },
    }),
  });
  storage.onIdleError((error) => app.log.warn({ err: error }, 'database connection lost'));

  // Routes and their schemas are compiled by ready(); what compiling left behind is collected
  // before the first request arrives (collect-startup-garbage.ts says why).
  await app.ready();
  collectStartupGarbage();
  await app.listen({ port: config.port, host: config.host });
  const { port } = app.server.address() as AddressInfo;
  if (!process.env.PUBLIC_BASE_URL) {
    // PORT=0 picks a free port: links handed out must name the real one.
    config.publicBaseUrl = config.publicBaseUrl.replace(/:\d+$/, `:${port}`);
  }
  app.log.info(
    { url: config.publicBaseUrl, storage: storage.description, environment: config.appEnv },
    `Haven listening on ${config.publicBaseUrl} (docs: ${config.publicBaseUrl}/docs)`,
  );

  const stop = gracefulStop(app, config.shutdownDelayMs, async () => {
    await storage.close();
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/**
 * The signal handler of a graceful stop, in three steps. 1. Not ready: /health/ready answers
 * 503 at once while every request is still served, for `delayMs` after SIGTERM, so load
 * balancers and Kubernetes endpoints stop sending here before anything is refused. 2. Drain:
 * new requests get 503, those in hand finish (bounded). 3. Close, then exit.
 * SIGINT (Ctrl-C at a terminal, where no balancer is watching) skips the delay; a second
 * signal during the delay ends it and drains at once. Once the drain has begun the handlers
 * are gone, so a further signal ends the process the default way (Ctrl-C twice).
 */
function gracefulStop(
  app: FastifyInstance,
  delayMs: number,
  closeStorage: () => Promise<void>,
): (signal: NodeJS.Signals) => void {
  let announced = false;
  let endDelay: (() => void) | undefined;
  const drainAndExit = async (signal: NodeJS.Signals) => {
    process.removeListener('SIGTERM', handler);
    process.removeListener('SIGINT', handler);
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // In-flight requests get a bounded grace period; then their connections are cut.
    const grace = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    grace.unref();
    try {
      // Answer what is in hand before closing: close() drops connections it deems idle.
      await app.drain(SHUTDOWN_GRACE_MS);
      await app.close();
      await closeStorage();
      app.log.info('stopped');
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  const handler = (signal: NodeJS.Signals) => {
    if (announced) {
      endDelay?.();
      return;
    }
    announced = true;
    app.announceStop();
    if (signal !== 'SIGTERM' || delayMs === 0) {
      void drainAndExit(signal);
      return;
    }
    app.log.info(
      { signal, delayMs },
      'shutting down: not ready, still serving for the shutdown delay',
    );
    const timer = setTimeout(() => endDelay?.(), delayMs);
    endDelay = () => {
      endDelay = undefined;
      clearTimeout(timer);
      void drainAndExit(signal);
    };
  };
  return handler;
}

main().catch((error: unknown) => {
  process.stderr.write(`haven: failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
