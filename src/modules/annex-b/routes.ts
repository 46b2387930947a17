// CONTRACT.md §9 "Annex B editions": GET /api/v1/annex-b/editions/{n}, public and unmetered
// (§4). A frozen edition never changes, so it is served with a strong ETag (its hash) and
// cached for a year by anyone; If-None-Match answers an empty 304.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ifNoneMatchHits, NotModified } from '../../http/conditional-get.js';
import { sendPreSerialized } from '../../http/pre-serialized.js';
import { RuleCategorySchema } from '../rules/routes.js';
import type { AnnexBService } from './service.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
// Until frozen, the answer may change at any moment: no cache may keep a 404.
const NOT_YET = 'no-cache';

const N_MESSAGE = 'n must be a positive integer';

const EditionParams = Type.Object({
  // Digits only, no sign, exponent or leading zero: one edition has one URL (a coerced
  // integer would also take `1.0`, `1e0` or `+1`, each a separate entry in every cache).
  n: Type.String({
    pattern: '^[1-9][0-9]{0,9}$',
    maxLength: 10,
    description: 'edition number (1, 2, …)',
    'x-error-message': N_MESSAGE,
  }),
});

const AnnexBEdition = Type.Object(
  {
    edition: Type.Integer({ minimum: 1 }),
    frozen_at: Type.String({ format: 'date-time' }),
    rules: Type.Array(RuleCategorySchema, {
      description: 'the rule categories as the registry held them when the edition was frozen',
    }),
  },
  {
    $id: 'AnnexBEdition',
    description: 'RFC 8785 canonical JSON; the ETag is `"sha256:<hex>"` of exactly these bytes.',
  },
);

export function annexBRoutes(annexB: AnnexBService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/annex-b/editions/:n',
      {
        config: { auth: 'public', errors: [404] },
        schema: {
          operationId: 'getAnnexBEdition',
          summary: 'A frozen Annex B edition (the rule registry), immutable and content-addressed',
          description:
            '404 `edition not frozen` for a number not frozen yet (every number before ' +
            'Edition 1). Not rate limited.',
          tags: ['Annex B'],
          params: EditionParams,
          response: {
            200: AnnexBEdition,
            304: NotModified('Not Modified: If-None-Match names this edition’s tag'),
          },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', NOT_YET);
        const edition = await annexB.readEdition(Number(request.params.n));
        reply.header('etag', edition.etag).header('cache-control', IMMUTABLE);
        if (ifNoneMatchHits(request.headers['if-none-match'], edition.etag)) {
          return reply.code(304).send();
        }
        return sendPreSerialized(reply, edition.artifact);
      },
    );
  };
}
