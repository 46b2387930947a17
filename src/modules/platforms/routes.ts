// Spec: "Platform"; CONTRACT.md §7.3 — the catalog of 22, served from memory.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProductSurface } from '../../auth/product-surface.js';
import { NotFoundError } from '../../http/errors.js';
import { sendPreSerialized } from '../../http/pre-serialized.js';
import { CAPABILITIES, findPlatform, PLATFORMS } from './catalog.js';

const PlatformSchema = Type.Object(
  {
    platform_id: Type.String(),
    id: Type.String({ description: 'same value as platform_id' }),
    name: Type.String(),
    category: Type.Enum(['device', 'dns', 'gaming', 'streaming']),
    tier: Type.Enum(['compliant', 'provisional', 'pending'], {
      description: 'how real the adapter is',
    }),
    auth_type: Type.Enum(['api_key', 'oauth2', 'manual']),
    capabilities: Type.Array(Type.Enum([...CAPABILITIES])),
    description: Type.String(),
  },
  { $id: 'Platform' },
);

const CATALOG_JSON = JSON.stringify(PLATFORMS);

const PlatformParams = Type.Object({
  platformID: Type.String({ minLength: 1, maxLength: 64 }),
});

export const platformRoutes: FastifyPluginAsyncTypebox<ProductSurface> = async (app, surface) => {
  app.get(
    '/platforms',
    {
      config: {
        auth: surface.auth,
        scope: 'read:platforms',
        errors: [401, 403],
        staticJson: CATALOG_JSON,
      },
      schema: {
        operationId: surface.operationId('listPlatforms'),
        summary: 'The 22 enforcement targets (not paginated)',
        tags: ['Platforms'],
        security: surface.security,
        response: { 200: Type.Array(PlatformSchema) },
      },
    },
    // Serialised once: the catalog never changes while the process runs.
    async (_request, reply) => sendPreSerialized(reply, CATALOG_JSON),
  );

  app.get(
    '/platforms/:platformID',
    {
      config: { auth: surface.auth, scope: 'read:platforms', errors: [401, 403, 404] },
      schema: {
        operationId: surface.operationId('getPlatform'),
        summary: 'One platform of the catalog',
        tags: ['Platforms'],
        security: surface.security,
        params: PlatformParams,
        response: { 200: PlatformSchema },
      },
    },
    async (request) => {
      const platform = findPlatform(request.params.platformID);
      if (!platform) {
        throw new NotFoundError('platform not found');
      }
      return platform;
    },
  );
};
