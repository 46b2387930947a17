// CONTRACT.md §9: GET /.well-known/ocss/keys and GET /.well-known/ocss/trust-list — public,
// unmetered, served from memory, cacheable for five minutes.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ifNoneMatchHits, NotModified } from '../../http/conditional-get.js';
import { sendPreSerialized } from '../../http/pre-serialized.js';
import { TRUST_LIST_CACHE_CONTROL, TRUST_LIST_PATH } from './trust-list-fast-path.js';
import type { TrustListService } from './trust-list-service.js';

const Jwk = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String(),
    kid: Type.String({ description: 'RFC 7638 thumbprint' }),
    use: Type.Literal('sig'),
    alg: Type.String(),
  },
  { $id: 'OcssJwk' },
);

const TrustListEnvelope = Type.Object(
  {
    document: Type.String({
      description:
        'RFC 8785 canonical JSON of {ocss_version, schema_version, type, issue, entries}',
    }),
    key_id: Type.String({ description: '<steward did>#<kid>' }),
    alg: Type.Literal('ed25519'),
    sig: Type.String({ description: 'ed25519:<base64url> over the UTF-8 bytes of document' }),
  },
  { $id: 'TrustListEnvelope' },
);

export function discoveryRoutes(trustList: TrustListService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/.well-known/ocss/keys',
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'getOcssKeys',
          summary: 'The steward’s signing keys (JWKS)',
          description:
            'The key that signs the current trust list first, then keys retired by a ' +
            'rotation less than 30 days ago (lists signed by them may still be cached).',
          tags: ['OCSS federation'],
          response: { 200: Type.Object({ keys: Type.Array(Jwk) }) },
        },
      },
      async (_request, reply) =>
        sendPreSerialized(
          reply.header('cache-control', TRUST_LIST_CACHE_CONTROL),
          trustList.keysJson(),
        ),
    );

    app.get(
      TRUST_LIST_PATH,
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'getTrustList',
          summary: 'The signed trust list (strong ETag; If-None-Match → 304)',
          tags: ['OCSS federation'],
          headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
          response: {
            200: TrustListEnvelope,
            304: NotModified('Unchanged since the ETag given'),
          },
        },
      },
      async (request, reply) => {
        const current = trustList.current();
        reply.header('etag', current.etag).header('cache-control', TRUST_LIST_CACHE_CONTROL);
        if (ifNoneMatchHits(request.headers['if-none-match'], current.etag)) {
          return reply.code(304).send();
        }
        return sendPreSerialized(reply, current.body);
      },
    );
  };
}
