// CONTRACT.md §7 connections rows: GET/POST /families/{familyID}/connections,
// DELETE /connections/{connectionID} (read/write:families); and Haven's PATCH
// /connections/{connectionID} that renews a connection's credentials (docs/decisions.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, NullableDateTime, Uuid } from '../../http/common-schemas.js';
import { FamilyParams } from '../families/schemas.js';
import type { ConnectionsService } from './service.js';

const TAGS = ['Connections'];

const ChildProfile = Type.Object(
  {
    id: Type.String(),
    displayName: Type.String(),
    subject_ref: Uuid('the Haven child id'),
    kind: Type.Literal('child'),
  },
  { $id: 'ChildProfile' },
);

export const Connection = Type.Object(
  {
    id: Uuid(),
    family_id: Uuid(),
    platform_id: Type.String(),
    status: Type.Enum(['connected', 'pending', 'credentials_rejected'], {
      description:
        'pending: an unknown platform, or one still waiting for its credentials; credentials_rejected: the partner refused the stored credentials at the last enforcement (renew them with PATCH /connections/{connectionID})',
    }),
    has_credentials: Type.Boolean({ description: 'credentials are stored, sealed; never shown' }),
    profiles: Type.Array(ChildProfile, {
      description: 'child profiles linked through a provider’s consent flow',
    }),
    created_at: DateTime(),
    updated_at: DateTime(),
    last_enforcement_at: NullableDateTime(),
    last_enforcement_status: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Connection' },
);

function Credentials() {
  return Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), {
    maxProperties: 16,
    description:
      'what the platform needs: nextdns {api_key, profile_id}, controld {api_token, profile_id}; stored encrypted, never shown',
  });
}

const RenewCredentialsBody = Type.Object({ credentials: Credentials() });

const CreateConnectionBody = Type.Object({
  platform_id: Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
    'x-error-message':
      "platform_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'",
    description: 'a catalog platform id, a provider DID, or any other id (kept pending)',
  }),
  credentials: Type.Optional(Credentials()),
  authorization_code: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'completes a provider connection with the code of its consent flow',
    }),
  ),
});

const ConnectionParams = Type.Object({ connectionID: Uuid() });

export function connectionRoutes(
  connections: ConnectionsService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:families' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:families' as const, errors: [401, 403, 404, 409, 503] };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/families/:familyID/connections',
      {
        config: write,
        schema: {
          ...route('createConnection', 'Connect a family to a platform (owner or parent)'),
          params: FamilyParams,
          body: CreateConnectionBody,
          response: { 201: Connection },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await connections.createConnection(
              requirePrincipal(request),
              request.params.familyID,
              request.body,
            ),
          ),
    );

    app.get(
      '/families/:familyID/connections',
      {
        config: read,
        schema: {
          ...route('listConnections', 'The family’s platform connections, newest first'),
          params: FamilyParams,
          response: { 200: Type.Array(Connection) },
        },
      },
      async (request) =>
        connections.listConnections(requirePrincipal(request), request.params.familyID),
    );

    app.patch(
      '/connections/:connectionID',
      {
        config: { ...write, errors: [400, 401, 403, 404, 503] },
        schema: {
          ...route(
            'renewConnectionCredentials',
            'Renew a connection’s credentials (owner or parent); checked with the partner in production',
          ),
          params: ConnectionParams,
          body: RenewCredentialsBody,
          response: { 200: Connection },
        },
      },
      async (request) =>
        connections.renewCredentials(
          requirePrincipal(request),
          request.params.connectionID,
          request.body.credentials,
        ),
    );

    app.delete(
      '/connections/:connectionID',
      {
        config: write,
        schema: {
          ...route('deleteConnection', 'Disconnect a platform (owner or parent)'),
          params: ConnectionParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await connections.deleteConnection(requirePrincipal(request), request.params.connectionID);
        return reply.code(204).send(null);
      },
    );
  };
}
