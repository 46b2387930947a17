// Sandbox without an identity provider: the development issuer's key set, and a route that
// mints a session token for a new user (what `npm run token` asks a running server for).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import type { DevIssuer } from './dev-issuer.js';

const TAGS = ['Sandbox'];

/** The public members only: the serializer drops anything else, private members included. */
const PublicJwk = Type.Object({
  kty: Type.Literal('RSA'),
  kid: Type.String({ description: 'RFC 7638 thumbprint' }),
  alg: Type.Literal('RS256'),
  use: Type.Literal('sig'),
  n: Type.String(),
  e: Type.String(),
});

const Jwks = Type.Object({ keys: Type.Array(PublicJwk) });

const SessionToken = Type.Object(
  {
    access_token: Type.String({ description: 'an RS256 session JWT for a new sandbox user' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'seconds' }),
    subject: Type.String(),
  },
  { $id: 'SandboxSessionToken' },
);

/** The body is optional: an empty POST mints a token with default claims. */
const MintBody = Type.Union([
  Type.Object({
    email: Type.Optional(Type.String({ maxLength: 255 })),
    name: Type.Optional(Type.String({ maxLength: 255 })),
  }),
  Type.Null(),
]);

export function devIssuerRoutes(issuer: DevIssuer): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/.well-known/haven/dev-jwks.json',
      {
        schema: {
          operationId: 'getDevIssuerJwks',
          summary: 'Key set of the sandbox development issuer',
          tags: TAGS,
          response: { 200: Jwks },
        },
      },
      async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        // Stored keys carry exactly these members (dev-issuer.ts), so the narrowing is safe.
        return issuer.jwks() as { keys: Array<Static<typeof PublicJwk>> };
      },
    );

    app.post(
      '/api/v1/sandbox/session-token',
      {
        schema: {
          operationId: 'createSandboxSessionToken',
          summary: 'A session token for a new sandbox user (sandbox without an identity provider)',
          tags: TAGS,
          body: MintBody,
          response: { 201: SessionToken },
        },
      },
      async (request, reply) => {
        const minted = await issuer.mint({ email: request.body?.email, name: request.body?.name });
        return reply.code(201).send({
          access_token: minted.token,
          token_type: 'Bearer' as const,
          expires_in: minted.expiresIn,
          subject: minted.subject,
        });
      },
    );
  };
}
