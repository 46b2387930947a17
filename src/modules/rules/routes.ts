// CONTRACT.md §7.1: GET /rules/categories, the closed registry of 123 — open, from memory.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProductSurface } from '../../auth/product-surface.js';
import { sendPreSerialized } from '../../http/pre-serialized.js';
import { RULE_REGISTRY } from './registry.js';

export const RuleCategorySchema = Type.Object(
  {
    category: Type.String(),
    group: Type.String(),
    name: Type.String(),
    description: Type.String(),
    config_schema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema' }),
    default_config: Type.Object({}, { additionalProperties: true }),
    engagement: Type.Boolean({ description: 'left out of the compiled device policy' }),
    capabilities: Type.Array(Type.String(), {
      description: 'platform capabilities that can enforce it',
    }),
  },
  { $id: 'RuleCategory' },
);

const REGISTRY_JSON = JSON.stringify(RULE_REGISTRY);

export const ruleCategoryRoutes: FastifyPluginAsyncTypebox<ProductSurface> = async (
  app,
  surface,
) => {
  const developer = surface.auth === 'developer';
  app.get(
    '/rules/categories',
    {
      config: {
        auth: developer ? 'developer' : 'public',
        errors: developer ? [401, 403] : [],
        staticJson: REGISTRY_JSON,
      },
      schema: {
        operationId: surface.operationId('listRuleCategories'),
        summary: 'The closed registry of 123 rule categories, with config schemas',
        tags: ['Rules'],
        ...(developer ? { security: surface.security } : {}),
        response: { 200: Type.Array(RuleCategorySchema) },
      },
    },
    async (_request, reply) => sendPreSerialized(reply, REGISTRY_JSON),
  );
};
