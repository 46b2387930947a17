// CONTRACT.md §8 viewing-history row: GET /viewing-history/{childId} (read:children).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, MAX_PAGE_LIMIT, Uuid } from '../../http/common-schemas.js';
import { DEFAULT_LIMIT, type ViewingHistoryService } from './service.js';

const Rating = Type.Object(
  {
    system: Type.Literal('csm'),
    slug: Type.String(),
    title: Type.String(),
    media_type: Type.Enum(['movie', 'tv', 'game', 'app', 'book']),
    age_rating: Type.String({ description: 'CSM-style "age N+"' }),
    age_range_min: Type.Integer(),
    quality_stars: Type.Integer({ minimum: 1, maximum: 5 }),
    is_family_friendly: Type.Boolean(),
    descriptors: Type.Array(Type.String()),
  },
  { $id: 'ViewingRating' },
);

export const ViewingEntry = Type.Object(
  {
    id: Uuid(),
    child_id: Uuid(),
    device_id: Type.Union([Uuid(), Type.Null()], {
      description: 'the reporting device; null once that device is deleted',
    }),
    platform: Type.String(),
    title: Type.String(),
    series_title: Type.Union([Type.String(), Type.Null()]),
    watched_at: DateTime(),
    created_at: DateTime(),
    rating: Type.Union([Rating, Type.Null()], {
      description: 'the CSM catalog review of the title (or else the series title); null if none',
    }),
  },
  { $id: 'ViewingEntry' },
);

const HistoryParams = Type.Object({ childId: Uuid() });

const HistoryQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `default ${DEFAULT_LIMIT}; larger than ${MAX_PAGE_LIMIT} is clamped to ${MAX_PAGE_LIMIT}`,
    }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'default 0' })),
});

export function viewingHistoryRoutes(
  history: ViewingHistoryService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    app.get(
      '/viewing-history/:childId',
      {
        config: { auth: surface.auth, scope: 'read:children', errors: [401, 403, 404] },
        schema: {
          operationId: surface.operationId('listViewingHistory'),
          summary: 'What a child watched, newest first (limit/offset)',
          tags: ['Viewing history'],
          security: surface.security,
          params: HistoryParams,
          querystring: HistoryQuery,
          response: { 200: Type.Array(ViewingEntry) },
        },
      },
      async (request) =>
        history.listHistory(requirePrincipal(request), request.params.childId, request.query),
    );
  };
}
