// Spec: "Provider connect config"; CONTRACT.md §6, §9 — GET /api/v1/providers/{did}/connect.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProvidersService } from './service.js';

const ConnectConfigSchema = Type.Object(
  {
    did: Type.String({ description: 'the provider, did:ocss:<name>' }),
    name: Type.String(),
    authorize_url: Type.String({ description: 'where the parent approves (OAuth authorize)' }),
    token_url: Type.String({ description: 'code → access token' }),
    profiles_url: Type.String({ description: 'the linked child profiles' }),
    scopes: Type.Array(Type.String()),
  },
  { $id: 'ProviderConnectConfig' },
);

const ProviderParams = Type.Object({
  did: Type.String({ minLength: 1, maxLength: 200, description: 'did:ocss:<name>' }),
});

export function providerRoutes(providers: ProvidersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/providers/:did/connect',
      {
        config: { auth: 'public', errors: [404] },
        schema: {
          operationId: 'getProviderConnectConfig',
          summary: 'How to send a parent through a provider’s consent to link children',
          description:
            '404 `provider connect config not available` for a known provider that has not ' +
            'published one; 404 `provider not found` for an unknown DID.',
          tags: ['Providers'],
          params: ProviderParams,
          response: { 200: ConnectConfigSchema },
        },
      },
      async (request) => providers.connectConfig(request.params.did),
    );
  };
}
