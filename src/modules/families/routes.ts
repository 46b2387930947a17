// Spec: "Families and children" (families); CONTRACT.md §7 (first rows).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { CreateFamilyBody, Family } from './schemas.js';
import type { FamiliesService } from './service.js';

const TAGS = ['Families'];

export function familyRoutes(families: FamiliesService): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    app.post(
      '/families',
      {
        config: { auth: surface.auth, scope: 'write:families', errors: [401, 403] },
        schema: {
          operationId: surface.operationId('createFamily'),
          summary: 'Create a family; a user caller becomes its owner, a key makes it its org’s',
          tags: TAGS,
          security: surface.security,
          body: CreateFamilyBody,
          response: { 201: Family },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await families.createFamily(requirePrincipal(request), request.body)),
    );

    app.get(
      '/families',
      {
        config: { auth: surface.auth, scope: 'read:families', errors: [401, 403] },
        schema: {
          operationId: surface.operationId('listFamilies'),
          summary: 'The families the caller can see, newest first',
          tags: TAGS,
          security: surface.security,
          response: { 200: Type.Array(Family) },
        },
      },
      async (request) => families.listFamilies(requirePrincipal(request)),
    );
  };
}
