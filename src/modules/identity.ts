// Identity and the developer control plane: the services behind every credential (sessions,
// API keys, MCP tokens, sandbox sessions) and the routes that mint and manage them.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { devIssuerRoutes } from '../auth/dev-issuer-routes.js';
import { registerProductRoutes } from '../auth/product-surface.js';
import { createSessionAuthority } from '../auth/session-authority.js';
import { createInvalidationBus } from '../cache/invalidation-bus.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { createApiKeysService } from './api-keys/service.js';
import { familyRoutes } from './families/routes.js';
import { createFamiliesService } from './families/service.js';
import { mcpTokenRoutes } from './mcp-tokens/routes.js';
import { createMcpTokensService } from './mcp-tokens/service.js';
import { orgRoutes } from './orgs/routes.js';
import { createOrgsService } from './orgs/service.js';
import { platformRoutes } from './platforms/routes.js';
import { usageRoutes } from './usage/routes.js';
import { createUsageService } from './usage/service.js';
import { userRoutes } from './users/routes.js';
import { createUsersService } from './users/service.js';

export async function createIdentity(
  config: Config,
  deps: { db: Db; clock: Clock },
  log: FastifyBaseLogger,
) {
  const bus = createInvalidationBus({ redisUrl: config.redisUrl, log });
  const users = createUsersService(deps);
  const orgs = createOrgsService({ ...deps, users });
  const apiKeys = createApiKeysService({ ...deps, orgs, bus });
  const families = createFamiliesService(deps);
  const mcpTokens = createMcpTokensService({ ...deps, families, bus });
  const usage = createUsageService({ ...deps, orgs });
  const authority = await createSessionAuthority(config, deps.db, deps.clock);
  return { bus, users, orgs, apiKeys, families, mcpTokens, usage, authority };
}

export type Identity = Awaited<ReturnType<typeof createIdentity>>;

export async function registerIdentityRoutes(
  app: FastifyInstance,
  identity: Identity,
): Promise<void> {
  if (identity.authority.devIssuer) {
    await app.register(devIssuerRoutes(identity.authority.devIssuer));
  }
  await app.register(userRoutes(identity.users));
  await app.register(orgRoutes(identity.orgs));
  await app.register(apiKeyRoutes(identity.apiKeys));
  await app.register(usageRoutes(identity.usage));
  await app.register(mcpTokenRoutes(identity.mcpTokens));
  await registerProductRoutes(app, familyRoutes(identity.families));
  await registerProductRoutes(app, platformRoutes);
}
