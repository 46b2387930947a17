// The modules, wired: their services (built once, with narrowed dependencies) and their
// routes. app.ts installs the cross-cutting hooks between the two steps.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { devIssuerRoutes } from '../auth/dev-issuer-routes.js';
import { registerProductRoutes } from '../auth/product-surface.js';
import { createSessionAuthority } from '../auth/session-authority.js';
import { createInvalidationBus } from '../cache/invalidation-bus.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { DatabaseNotifications } from '../db/notifications.js';
import { createChangeRunner } from '../db/transaction-effects.js';
import { startAgeChanges } from '../jobs/age-changes.js';
import { createJobQueue } from '../jobs/queue.js';
import { startRetentionRun } from '../jobs/retention.js';
import { createMemoryNonceStore, createRedisNonceStore } from '../ocss/nonce-store.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { createAgesService } from './age/service.js';
import { ageSignalRoutes } from './age/signals-routes.js';
import { createAgeSignalsService } from './age/signals-service.js';
import { annexBRoutes } from './annex-b/routes.js';
import { createAnnexBService } from './annex-b/service.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { createApiKeysService } from './api-keys/service.js';
import { familyAuditRoutes, orgAuditRoutes } from './audit/routes.js';
import { createAuditService } from './audit/service.js';
import { createAuditSink } from './audit/sink.js';
import { childRoutes } from './children/routes.js';
import { createChildrenService } from './children/service.js';
import { connectionRoutes } from './connections/routes.js';
import { createConnectionsService, loadCredentialCipher } from './connections/service.js';
import { consoleRoutes } from './console/routes.js';
import { DEMO_FAMILY_ID, seedDemoFamily } from './demo/demo-family.js';
import { deviceAgentRoutes } from './devices/agent-routes.js';
import { createDeviceAgentService } from './devices/agent-service.js';
import { deviceRoutes } from './devices/routes.js';
import { createDevicesService } from './devices/service.js';
import { enforcementRoutes } from './enforcement/routes.js';
import { sandboxFailureRoutes } from './enforcement/sandbox-routes.js';
import { createEnforcementService } from './enforcement/service.js';
import { erasureRoutes } from './erasure/routes.js';
import { createErasureService } from './erasure/service.js';
import { createEventHub } from './events/hub.js';
import { exportRoutes } from './export/routes.js';
import { createExportService } from './export/service.js';
import { familyMemberRoutes } from './families/member-routes.js';
import { familyRoutes } from './families/routes.js';
import { createFamiliesService } from './families/service.js';
import { advisorRoutes } from './federation/advisor-routes.js';
import { createAdvisorsService } from './federation/advisors-service.js';
import { discoveryRoutes } from './federation/discovery-routes.js';
import { loadStewardKey } from './federation/keys.js';
import { seedFederation } from './federation/seed.js';
import { createSignatureGuard } from './federation/signature-guard.js';
import { signedRoutes } from './federation/signed-routes.js';
import { createTrustListService } from './federation/trust-list-service.js';
import { mcpRoutes } from './mcp/routes.js';
import { mcpTokenRoutes } from './mcp-tokens/routes.js';
import { createMcpTokensService } from './mcp-tokens/service.js';
import { sandboxOAuthRoutes } from './oauth/routes.js';
import { createSandboxOAuthProvider } from './oauth/service.js';
import { orgRoutes } from './orgs/routes.js';
import { createOrgsService } from './orgs/service.js';
import { createLivePartners } from './partners/live-partners.js';
import type { PartnerHttpTuning } from './partners/partner-http.js';
import { platformRoutes } from './platforms/routes.js';
import { createPolicyChanges } from './policies/policy-changes.js';
import { policyRoutes } from './policies/routes.js';
import { createPoliciesService } from './policies/service.js';
import { providerRoutes } from './providers/routes.js';
import { createProvidersService } from './providers/service.js';
import { quickSetupRoutes } from './quick-setup/routes.js';
import { createQuickSetupService } from './quick-setup/service.js';
import { ratingRoutes } from './ratings/routes.js';
import { retentionRoutes } from './retention/routes.js';
import { createRetentionService } from './retention/service.js';
import { ruleCategoryRoutes } from './rules/routes.js';
import { createSandboxSessionsService } from './sandbox-sessions/service.js';
import { createFamilyClock } from './test-clocks/family-clock.js';
import { testClockRoutes } from './test-clocks/routes.js';
import { createTestClocksService } from './test-clocks/service.js';
import { usageRoutes } from './usage/routes.js';
import { createUsageService } from './usage/service.js';
import { userRoutes } from './users/routes.js';
import { createUsersService } from './users/service.js';
import { viewingHistoryRoutes } from './viewing-history/routes.js';
import { createViewingHistoryService } from './viewing-history/service.js';
import type { HostResolver } from './webhooks/address-guard.js';
import { webhookRoutes } from './webhooks/routes.js';
import { createWebhooks } from './webhooks/webhooks-module.js';

/** Signed-request nonces: shared through Redis when there is one, else per process. */
function createNonceStore(redisUrl: string | undefined, clock: Clock, log: FastifyBaseLogger) {
  if (!redisUrl) {
    return { store: createMemoryNonceStore({ clock }), close: async () => {} };
  }
  const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  let warned = false;
  const onError = (error: Error) => {
    if (!warned) {
      warned = true;
      log.warn({ err: error }, 'redis unavailable: signature nonces checked in this process');
    }
  };
  redis.on('error', onError);
  redis.on('ready', () => {
    warned = false;
  });
  return {
    store: createRedisNonceStore({ redis, clock, onError }),
    close: async () => {
      redis.disconnect();
    },
  };
}

/** Knobs tests turn (never read from the environment). */
export interface ServiceTuning {
  /** Seconds an idle job worker waits before looking for due jobs again. */
  jobPollingIntervalSeconds?: number;
  /** Seconds before webhook attempts 2..8 (tests pass zeros instead of 5 s … 10 h). */
  webhookRetryDelaysSeconds?: readonly number[];
  /** How long a webhook endpoint has to answer (default 15 s). */
  webhookTimeoutMs?: number;
  /** How webhook hosts resolve (tests pick the addresses a name resolves to). */
  webhookResolver?: HostResolver;
  /** Partner API calls: attempt timeout, retries, backoff (tests shorten them). */
  partnerHttp?: PartnerHttpTuning;
  /** How often the real clock's age run looks for due children (default 60 s). */
  ageRunPeriodMs?: number;
  /** How often the real clock's retention purge looks whether a new day began (default 60 s). */
  retentionRunPeriodMs?: number;
  /**
   * Whether changes write audit entries (default true). Off only to measure what the log
   * costs (`npm run bench`); a deployment never turns it off.
   */
  auditLog?: boolean;
}

export async function createServices(
  config: Config,
  {
    notifications,
    telemetry,
    ...deps
  }: { db: Db; clock: Clock; notifications?: DatabaseNotifications; telemetry: Telemetry },
  log: FastifyBaseLogger,
  /** Other processes may write the same database (PostgreSQL), so some caches check it. */
  sharedDatabase: boolean,
  tuning: ServiceTuning = {},
) {
  const bus = createInvalidationBus({ redisUrl: config.redisUrl, log });
  const policyChanges = createPolicyChanges(bus);
  const jobs = createJobQueue({
    db: deps.db,
    log,
    runWorkers: config.workers === 'inline',
    notifications,
    pollingIntervalSeconds: tuning.jobPollingIntervalSeconds,
    telemetry,
  });
  const events = createEventHub({ clock: deps.clock });
  // Every change's events are handed to their subscribers inside the change's transaction.
  const writes = createChangeRunner({ db: deps.db });
  writes.addSink(events.sink);
  // And their audit entries appended to their chains, in the same transaction.
  writes.addSink(createAuditSink({ clock: deps.clock, enabled: tuning.auditLog ?? true }));
  const users = createUsersService(deps);
  const sandboxSessions = createSandboxSessionsService({
    ...deps,
    bus,
    log,
    limits: config.sandboxSessions,
    policyChanges,
  });
  const orgs = createOrgsService({ ...deps, users, writes });
  const apiKeys = createApiKeysService({ ...deps, orgs, bus, writes });
  const testClocks = createTestClocksService({
    ...deps,
    jobs,
    writes,
    enabled: config.appEnv === 'sandbox',
  });
  const familyClock = createFamilyClock(deps);
  const families = createFamiliesService({
    ...deps,
    users,
    sandbox: config.appEnv === 'sandbox',
    testClocks,
    writes,
  });
  const mcpTokens = createMcpTokensService({ ...deps, families, bus, writes });
  const children = createChildrenService({
    ...deps,
    families,
    writes,
    familyClock,
  });
  const policies = createPoliciesService({
    ...deps,
    children,
    families,
    writes,
    changes: policyChanges,
  });
  const ages = createAgesService({ ...deps, writes, policies, metrics: telemetry.metrics });
  const ageSignals = createAgeSignalsService({
    ...deps,
    writes,
    children,
    families,
    ages,
    policyChanges,
  });
  const retention = createRetentionService({ ...deps, writes, days: config.retention });
  const ageChanges = startAgeChanges({
    ...deps,
    log,
    jobs,
    ages,
    retention,
    runWorkers: config.workers === 'inline',
    periodMs: tuning.ageRunPeriodMs,
  });
  const retentionRun = startRetentionRun({
    ...deps,
    log,
    retention,
    runWorkers: config.workers === 'inline',
    periodMs: tuning.retentionRunPeriodMs,
  });
  const viewingHistory = createViewingHistoryService({ ...deps, families });
  const devices = createDevicesService({ ...deps, log, bus, writes, children, families });
  const deviceAgent = createDeviceAgentService({
    ...deps,
    writes,
    policies,
    policyChanges,
    viewingHistory,
  });
  const quickSetup = createQuickSetupService({
    ...deps,
    families,
    children,
    writes,
    policyChanges,
    familyClock,
    testClocks,
    auditLog: tuning.auditLog ?? true,
  });
  const usage = createUsageService({ ...deps, orgs });
  const sandboxOAuth = await createSandboxOAuthProvider({
    ...deps,
    enabled: config.appEnv === 'sandbox',
  });
  const cipher = await loadCredentialCipher(deps.db, config);
  const livePartners = createLivePartners({
    ...deps,
    instance: { id: jobs.instanceId, staleSeconds: jobs.staleSeconds },
    urls: config.partnerApiUrls,
    tuning: tuning.partnerHttp,
    telemetry,
  });
  const connections = createConnectionsService({
    ...deps,
    writes,
    appEnv: config.appEnv,
    livePartners,
    families,
    sandboxOAuth,
    cipher,
  });
  const webhooks = createWebhooks({
    ...deps,
    log,
    appEnv: config.appEnv,
    jobs,
    events,
    families,
    cipher,
    writes,
    telemetry,
    tuning: {
      retryDelaysSeconds: tuning.webhookRetryDelaysSeconds,
      timeoutMs: tuning.webhookTimeoutMs,
      resolve: tuning.webhookResolver,
    },
  });
  const enforcement = createEnforcementService({
    ...deps,
    jobs,
    events,
    writes,
    children,
    families,
    policies,
    connections,
    appEnv: config.appEnv,
    livePartners,
  });
  const providers = createProvidersService({ ...deps, ...config });
  await providers.seed();
  const steward = await loadStewardKey(deps.db, config);
  await seedFederation(deps.db, { ...config, steward });
  const trustList = createTrustListService({
    ...deps,
    bus,
    log,
    steward,
    stewardDid: config.stewardDid,
    watchDatabase: sharedDatabase,
    notifications,
  });
  await trustList.reissue();
  const advisors = createAdvisorsService({ ...deps, trustList, orgs, families, writes });
  const nonces = createNonceStore(config.redisUrl, deps.clock, log);
  const signatureGuard = createSignatureGuard({
    trustList,
    clock: deps.clock,
    publicBaseUrl: config.publicBaseUrl,
    nonces: nonces.store,
  });
  await seedDemoFamily(deps.db, deps.clock);
  // The seed may have repaired the demo policies under instances already running.
  await policyChanges.family(DEMO_FAMILY_ID);
  const authority = await createSessionAuthority(config, deps.db, deps.clock);
  const annexB = createAnnexBService(deps);
  const audit = createAuditService({ ...deps, families, orgs, steward });
  const erasure = createErasureService({
    ...deps,
    log,
    appEnv: config.appEnv,
    writes,
    jobs,
    bus,
    cipher,
    livePartners,
    steward,
    familyClock,
    families,
    children,
    policyChanges,
  });
  const familyExports = createExportService({ ...deps, families, children, familyClock });
  return {
    bus,
    jobs,
    events,
    writes,
    users,
    sandboxSessions,
    orgs,
    apiKeys,
    families,
    mcpTokens,
    usage,
    authority,
    children,
    policies,
    ages,
    ageSignals,
    ageChanges,
    retention,
    retentionRun,
    testClocks,
    viewingHistory,
    devices,
    deviceAgent,
    quickSetup,
    sandboxOAuth,
    connections,
    enforcement,
    webhooks,
    providers,
    trustList,
    advisors,
    nonces,
    signed: { ...deps, appEnv: config.appEnv, guard: signatureGuard.guard },
    /** The signed routes' verifier, for their fast path (signed-read-fast-path.ts). */
    signerCheck: signatureGuard.check,
    annexB,
    audit,
    familyExports,
    erasure,
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;

/** Stops the workers first (they use everything else), then the rest. */
export async function closeServices(services: Services): Promise<void> {
  await services.ageChanges.stop();
  await services.retentionRun.stop();
  await services.jobs.stop();
  await services.sandboxSessions.close();
  await services.devices.close();
  services.trustList.close();
  await services.nonces.close();
  await services.bus.close();
}

export async function registerRoutes(
  app: FastifyInstance,
  services: Services,
  config: Pick<Config, 'publicBaseUrl'>,
): Promise<void> {
  if (services.authority.devIssuer) {
    await app.register(devIssuerRoutes(services.authority.devIssuer));
  }
  await app.register(userRoutes(services.users));
  await app.register(orgRoutes(services.orgs));
  await app.register(apiKeyRoutes(services.apiKeys));
  await app.register(usageRoutes(services.usage));
  await app.register(mcpTokenRoutes(services.mcpTokens));
  await app.register(orgAuditRoutes(services.audit));
  await registerProductRoutes(app, familyRoutes(services.families, services.erasure));
  await registerProductRoutes(app, familyMemberRoutes(services.families));
  await registerProductRoutes(app, familyAuditRoutes(services.audit));
  await registerProductRoutes(app, childRoutes(services.children, services.erasure));
  await registerProductRoutes(app, ageSignalRoutes(services.ageSignals));
  await registerProductRoutes(app, policyRoutes(services.policies));
  await registerProductRoutes(app, quickSetupRoutes(services.quickSetup));
  await registerProductRoutes(app, platformRoutes);
  await registerProductRoutes(app, ratingRoutes);
  await registerProductRoutes(app, ruleCategoryRoutes);
  await registerProductRoutes(app, connectionRoutes(services.connections));
  await registerProductRoutes(app, enforcementRoutes(services.enforcement));
  // Simulated platform failures exist on sandbox deployments only (elsewhere: 404).
  if (services.enforcement.sandboxFailures) {
    await registerProductRoutes(app, sandboxFailureRoutes(services.enforcement.sandboxFailures));
  }
  // Test clocks exist on sandbox deployments only (elsewhere: 404).
  if (services.testClocks.enabled) {
    await registerProductRoutes(app, testClockRoutes(services.testClocks));
  }
  await registerProductRoutes(app, deviceRoutes(services.devices));
  await registerProductRoutes(app, viewingHistoryRoutes(services.viewingHistory));
  await registerProductRoutes(app, webhookRoutes(services.webhooks));
  await registerProductRoutes(app, exportRoutes(services.familyExports));
  await registerProductRoutes(app, erasureRoutes(services.erasure));
  await app.register(deviceAgentRoutes(services.deviceAgent));
  await app.register(providerRoutes(services.providers));
  await app.register(discoveryRoutes(services.trustList));
  await app.register(advisorRoutes(services.advisors));
  await app.register(signedRoutes({ ...services.signed, providers: services.providers }));
  await app.register(sandboxOAuthRoutes(services.sandboxOAuth));
  await app.register(annexBRoutes(services.annexB));
  await app.register(retentionRoutes(services.retention.days));
  await app.register(mcpRoutes({ root: app, publicBaseUrl: () => config.publicBaseUrl }));
  await app.register(consoleRoutes);
}
