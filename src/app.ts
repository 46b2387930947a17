// buildApp(config, deps): the whole service as a Fastify instance, without listening.
// Tests build it on their own database and clock; main.ts builds it for real.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { enforceAuthentication, installAuthentication } from './auth/authenticate.js';
import { keyedAdmission } from './auth/keyed-admission.js';
import { keyedCatalogFastPath } from './auth/keyed-catalog-fast-path.js';
import { type KeyedReadOptions, keyedReadFastPath } from './auth/keyed-read-fast-path.js';
import { type Clock, systemClock } from './clock.js';
import type { Config, TrustProxy } from './config.js';
import type { DatabaseHandle } from './db/connect.js';
import { createAccessLog } from './http/access-log.js';
import { clientAddress } from './http/client-address.js';
import { installCors } from './http/cors.js';
import { installDraining } from './http/draining.js';
import { installErrorHandler, sendFailure } from './http/error-handler.js';
import { createFastPaths } from './http/fast-path.js';
import { registerFavicon } from './http/favicon.js';
import { installIdempotency } from './http/idempotency.js';
import { BODY_LIMIT_BYTES, installJsonBodyParser } from './http/json-body.js';
import { lazyChildLoggerFactory } from './http/lazy-request-logger.js';
import { LogWriter } from './http/log-writer.js';
import { registerOpenApi } from './http/openapi.js';
import {
  installRequestLog,
  logDestination,
  loggerOptions,
  requestIdFor,
} from './http/request-log.js';
import { answeredBeforeRouting, installRequestTelemetry } from './http/request-telemetry.js';
import type { SerializerCompiler } from './http/route-serializers.js';
import { installStorableParams } from './http/storable-text.js';
import { installValidators } from './http/validator.js';
import { devicePollFastPath } from './modules/devices/poll-fast-path.js';
import {
  type SignedReadOptions,
  signedReadFastPath,
} from './modules/federation/signed-read-fast-path.js';
import { trustListNotModified } from './modules/federation/trust-list-fast-path.js';
import { healthFastPath } from './modules/health/fast-path.js';
import { metricsRoutes } from './modules/health/metrics-routes.js';
import { registerProbes } from './modules/health/probes.js';
import { healthRoutes } from './modules/health/routes.js';
import { createHealthService } from './modules/health/service.js';
import { installUsageMetering } from './modules/usage/metering.js';
import { createUsageRecorder } from './modules/usage/recorder.js';
import {
  closeServices,
  createServices,
  registerRoutes,
  type ServiceTuning,
} from './modules/wiring.js';
import { installRateLimit } from './ratelimit/plugin.js';
import { createMemoryStore, createRedisStore } from './ratelimit/stores.js';
import { createTelemetry, type Telemetry } from './telemetry/telemetry.js';

export interface AppDeps {
  database: DatabaseHandle;
  clock?: Clock;
  /** Where log lines go (stdout when absent); tests read them. */
  logStream?: NodeJS.WritableStream;
  /** Extra plugins registered after the core (tests add routes of their own here). */
  plugins?: Array<(app: FastifyInstance) => Promise<void>>;
  tuning?: ServiceTuning;
  /** Metrics and traces (one per process); a new set for this app when absent. */
  telemetry?: Telemetry;
}

/** A hop count becomes the equivalent function (Fastify's types do not take numbers). */
function fastifyTrustProxy(
  setting: TrustProxy,
): boolean | string[] | ((addr: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_addr, hop) => hop < setting : setting;
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const telemetry = deps.telemetry ?? createTelemetry(config);
  telemetry.metrics.watchPool(() => deps.database.poolState());
  // pino's lines and the access lines go through one writer, so they keep their order.
  const logStream = deps.logStream ? new LogWriter({ stream: deps.logStream }) : logDestination();
  const access = createAccessLog(config.logLevel, logStream);
  const fastPaths = createFastPaths(access, telemetry);
  const trustProxy = fastifyTrustProxy(config.trustProxy);
  const app = Fastify({
    serverFactory: fastPaths.serverFactory,
    logger: loggerOptions(config.logLevel, logStream),
    genReqId: requestIdFor,
    childLoggerFactory: lazyChildLoggerFactory,
    requestIdHeader: false,
    // One line per request is written by installRequestLog instead.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    // Requests that arrive while closing are answered by the drain hook (house envelope;
    // /health says `draining`), not by Fastify's own 503 body.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 512 },
    // Errors raised before routing (a malformed URL) still leave as the house envelope.
    frameworkErrors: (error, request, reply) => {
      const startedAt = performance.now();
      reply.header('x-request-id', request.id);
      sendFailure(reply, {
        status: 400,
        message: error.code === 'FST_ERR_BAD_URL' ? 'malformed URL' : 'invalid request',
      });
      // No hook runs for these: counted here, as unmatched.
      answeredBeforeRouting(telemetry, request, reply, startedAt);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installValidators(app);
  installJsonBodyParser(app);
  installStorableParams(app);
  installErrorHandler(app);
  installRequestTelemetry(app, telemetry);
  installRequestLog(app, access);
  const inFlight = installDraining(app);
  installCors(app);
  await registerOpenApi(app, config);
  registerFavicon(app);
  const db = deps.database.db;
  const services = await createServices(
    config,
    { db, clock, notifications: deps.database.notifications, telemetry },
    app.log,
    deps.database.backend === 'postgres',
    deps.tuning,
  );
  fastPaths.add(trustListNotModified(services.trustList));
  // Workers start once every route (and so every job handler) is registered, and stop
  // before anything they use is closed.
  app.addHook('onReady', () => services.jobs.start());
  app.addHook('onClose', async () => {
    await closeServices(services);
    // After the workers stopped: their last spans are in the batch it sends.
    await telemetry.tracing.shutdown();
  });

  // onRequest order matters: who is calling, then metering (which counts failed
  // authentication against the client IP), then the 401/403 answers.
  installAuthentication(app, {
    appEnv: config.appEnv,
    sessions: services.authority.verifier,
    users: services.users,
    apiKeys: services.apiKeys,
    mcpTokens: services.mcpTokens,
    sandboxSessions: services.sandboxSessions,
    devices: services.devices,
  });
  const rateLimits = config.redisUrl
    ? createRedisStore(config.redisUrl, app.log)
    : createMemoryStore();
  app.addHook('onClose', () => rateLimits.close());
  installRateLimit(app, {
    store: rateLimits,
    clock,
    orgLimit: services.orgs.rateLimitOf,
    metrics: telemetry.metrics,
  });
  enforceAuthentication(app);
  const usage = createUsageRecorder({ db, log: app.log });
  installUsageMetering(app, usage, clock);
  installIdempotency(app, db, clock, {
    id: services.jobs.instanceId,
    staleAfterSeconds: services.jobs.staleSeconds,
  });
  // The metered fast paths count in in-process buckets only: a Redis bucket answers
  // asynchronously, after which a request could no longer be handed to its route uncounted
  // (see allowedNow). With REDIS_URL their routes answer, still from memory.
  if (rateLimits.synchronous) {
    fastPaths.add(
      devicePollFastPath({
        devices: services.devices,
        agent: services.deviceAgent,
        buckets: rateLimits,
        clock,
        draining: () => app.draining,
      }),
    );
    const admit = keyedAdmission({
      appEnv: config.appEnv,
      apiKeys: services.apiKeys,
      orgLimit: services.orgs.rateLimitOf,
      buckets: rateLimits,
      clock,
      draining: () => app.draining,
    });
    // Registered before the routes, whose catalogs and keyed reads they collect as they are
    // added (after the OpenAPI step, which gives each route its error responses' schemas).
    const catalogs = keyedCatalogFastPath({ admit, usage });
    app.addHook('onRoute', catalogs.collect);
    fastPaths.add(catalogs);
    const readOptions: KeyedReadOptions = {
      admit,
      usage,
      serializerCompiler: () => app.serializerCompiler as unknown as SerializerCompiler,
      inFlight,
      draining: () => app.draining,
      log: app.log,
    };
    const signedOptions: SignedReadOptions = {
      check: services.signerCheck,
      nonces: services.nonces.store,
      buckets: rateLimits,
      clientAddress: clientAddress(trustProxy),
      clock,
      serializerCompiler: readOptions.serializerCompiler,
      inFlight,
      draining: () => app.draining,
      log: app.log,
    };
    app.addHook('onRoute', (route) => {
      const read =
        keyedReadFastPath(route, readOptions) ?? signedReadFastPath(route, signedOptions);
      if (read) {
        fastPaths.add(read);
      }
    });
  }

  const health = createHealthService({ ping: deps.database.ping, clock });
  await app.register(healthRoutes(health, config.appEnv));
  fastPaths.add(
    healthFastPath({
      health,
      environment: config.appEnv,
      stopping: () => app.stopping,
    }),
  );
  await registerProbes(app, {
    health,
    redisUrl: config.redisUrl,
    clock,
    stopping: () => app.stopping,
    addFastPath: fastPaths.add,
  });
  await app.register(
    metricsRoutes(telemetry.metrics, { appEnv: config.appEnv, tokens: config.metricsTokens }),
  );
  await registerRoutes(app, services, config);

  for (const plugin of deps.plugins ?? []) {
    await app.register(plugin);
  }
  return app;
}
