// Spec: DeveloperApiKey and Authentication rules 1, 7, 8; CONTRACT.md §3 (keys).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionPrincipal, sessionUserId } from '../../auth/principal.js';
import { OrgParams } from '../orgs/schemas.js';
import {
  CreateApiKeyBody,
  DeveloperApiKey,
  DeveloperApiKeyWithSecret,
  KeyParams,
} from './schemas.js';
import type { ApiKeysService } from './service.js';

const TAGS = ['API keys'];
const SECURITY = [{ session: [] }];

export function apiKeyRoutes(keys: ApiKeysService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/developers/orgs/:orgId/keys',
      {
        config: { auth: 'session', errors: [401, 403, 404, 422] },
        schema: {
          operationId: 'createApiKey',
          summary: 'Mint an API key for the org (owner or admin); the secret is shown once',
          tags: TAGS,
          security: SECURITY,
          params: OrgParams,
          body: CreateApiKeyBody,
          response: { 201: DeveloperApiKeyWithSecret },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await keys.createKey(sessionPrincipal(request), request.params.orgId, request.body),
          ),
    );

    app.get(
      '/api/v1/developers/orgs/:orgId/keys',
      {
        config: { auth: 'session', errors: [401, 404] },
        schema: {
          operationId: 'listApiKeys',
          summary: 'The org keys, newest first, revoked ones included (never a secret)',
          tags: TAGS,
          security: SECURITY,
          params: OrgParams,
          response: { 200: Type.Array(DeveloperApiKey) },
        },
      },
      async (request) => keys.listKeys(sessionUserId(request), request.params.orgId),
    );

    app.delete(
      '/api/v1/developers/orgs/:orgId/keys/:keyId',
      {
        config: { auth: 'session', errors: [401, 403, 404] },
        schema: {
          operationId: 'revokeApiKey',
          summary: 'Revoke a key (owner or admin); its next use is 401',
          tags: TAGS,
          security: SECURITY,
          params: KeyParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        const { orgId, keyId } = request.params;
        await keys.revokeKey(sessionPrincipal(request), orgId, keyId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/api/v1/developers/orgs/:orgId/keys/:keyId/regenerate',
      {
        config: { auth: 'session', errors: [401, 403, 404] },
        schema: {
          operationId: 'regenerateApiKey',
          summary: 'Replace a key with a new one of the same settings; the old one is revoked',
          tags: TAGS,
          security: SECURITY,
          params: KeyParams,
          response: { 201: DeveloperApiKeyWithSecret },
        },
      },
      async (request, reply) => {
        const { orgId, keyId } = request.params;
        return reply
          .code(201)
          .send(await keys.regenerateKey(sessionPrincipal(request), orgId, keyId));
      },
    );
  };
}
