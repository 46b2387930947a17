// CONTRACT.md §3: /api/v1/mcp/tokens (session only).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionPrincipal, sessionUserId } from '../../auth/principal.js';
import { CreatedMcpToken, CreateMcpTokenBody, McpToken, McpTokenParams } from './schemas.js';
import type { McpTokensService } from './service.js';

const TAGS = ['MCP tokens'];
const SECURITY = [{ session: [] }];

export function mcpTokenRoutes(tokens: McpTokensService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/mcp/tokens',
      {
        config: { auth: 'session', errors: [401, 404] },
        schema: {
          operationId: 'createMcpToken',
          summary: 'Mint an MCP token for one of the caller’s families; shown once',
          description:
            'In the sandbox the shared demo family may be chosen too: the token reads it as its user does, and its writes answer 403 `demo family is read-only`.',
          tags: TAGS,
          security: SECURITY,
          body: CreateMcpTokenBody,
          response: { 201: CreatedMcpToken },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await tokens.createToken(sessionPrincipal(request), request.body)),
    );

    app.get(
      '/api/v1/mcp/tokens',
      {
        config: { auth: 'session', errors: [401] },
        schema: {
          operationId: 'listMcpTokens',
          summary: 'The caller’s MCP tokens, newest first (never the secret)',
          tags: TAGS,
          security: SECURITY,
          response: { 200: Type.Array(McpToken) },
        },
      },
      async (request) => tokens.listTokens(sessionUserId(request)),
    );

    app.delete(
      '/api/v1/mcp/tokens/:id',
      {
        config: { auth: 'session', errors: [401, 404] },
        schema: {
          operationId: 'revokeMcpToken',
          summary: 'Revoke an MCP token; its next use is 401',
          tags: TAGS,
          security: SECURITY,
          params: McpTokenParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await tokens.revokeToken(sessionPrincipal(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
