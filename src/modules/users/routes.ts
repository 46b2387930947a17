// Spec: "Other routes named in the contract" — /auth/me and /auth/logout (CONTRACT.md §2).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionUserId } from '../../auth/principal.js';
import { DateTime, Uuid } from '../../http/common-schemas.js';
import type { UsersService } from './service.js';

const TAGS = ['Auth'];
const SECURITY = [{ session: [] }];

const Me = Type.Object(
  {
    id: Uuid('the internal user id'),
    email: Type.String({ description: 'from the token claims, or empty' }),
    name: Type.String({ description: 'from the token claims, or empty' }),
    created_at: DateTime(),
  },
  { $id: 'AuthenticatedUser' },
);

export function userRoutes(users: UsersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/auth/me',
      {
        config: { auth: 'session', errors: [401] },
        schema: {
          operationId: 'getAuthenticatedUser',
          summary: 'The user behind the session token',
          tags: TAGS,
          security: SECURITY,
          response: { 200: Me },
        },
      },
      async (request) => users.getUser(sessionUserId(request)),
    );

    app.post(
      '/api/v1/auth/logout',
      {
        config: { auth: 'session', errors: [401] },
        schema: {
          operationId: 'logout',
          summary: 'No-op: the identity provider owns session revocation',
          tags: TAGS,
          security: SECURITY,
          response: { 204: Type.Null() },
        },
      },
      async (_request, reply) => reply.code(204).send(null),
    );
  };
}
