// CONTRACT.md §12.3: an erasure's receipt. The erasures themselves are the DELETE routes of
// families and children.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { ErasureParams, ErasureReceiptSchema } from './schemas.js';
import type { ErasureService } from './service.js';

export function erasureRoutes(erasure: ErasureService): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    app.get(
      '/erasures/:erasureID',
      {
        config: { auth: surface.auth, scope: 'read:families', errors: [401, 403, 404] },
        schema: {
          operationId: surface.operationId('getErasure'),
          summary: 'The receipt of an erasure (the user who erased, or the keys of its org)',
          description:
            'What a DELETE of a family or a child erased (rows per table) and released on each connected platform, signed by the steward key once every release has ended. Another caller gets 404.',
          tags: ['Erasures'],
          security: surface.security,
          params: ErasureParams,
          response: { 200: ErasureReceiptSchema },
        },
      },
      async (request) => erasure.getErasure(requirePrincipal(request), request.params.erasureID),
    );
  };
}
