// CONTRACT.md §2: every product route is served twice by the same handlers, under /api/v1
// (session, MCP token, API key, or anonymous in the sandbox) and under /api/v1/developer
// (API keys only). A module writes its routes once, against a ProductSurface.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AuthMode } from './principal.js';

export interface ProductSurface {
  auth: Extract<AuthMode, 'product' | 'developer'>;
  /** Distinct operation ids for the two registrations of one handler. */
  operationId(name: string): string;
  security: Array<Record<string, string[]>>;
}

const SURFACES: Array<ProductSurface & { prefix: string }> = [
  {
    prefix: '/api/v1',
    auth: 'product',
    operationId: (name) => name,
    security: [{ session: [] }, { mcpToken: [] }, { apiKey: [] }, { apiKeyHeader: [] }, {}],
  },
  {
    prefix: '/api/v1/developer',
    auth: 'developer',
    operationId: (name) => `developer${name.charAt(0).toUpperCase()}${name.slice(1)}`,
    security: [{ apiKey: [] }, { apiKeyHeader: [] }],
  },
];

export async function registerProductRoutes(
  app: FastifyInstance,
  routes: FastifyPluginAsyncTypebox<ProductSurface>,
): Promise<void> {
  for (const surface of SURFACES) {
    await app.register(routes, surface);
  }
}
