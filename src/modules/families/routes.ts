// Spec: "Families and children" (families); CONTRACT.md §7 (first rows).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { keyedRead } from '../../auth/keyed-read-fast-path.js';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { ERASURE_ID_HEADER, erasedResponse } from '../erasure/schemas.js';
import type { ErasureService } from '../erasure/service.js';
import { CreateFamilyBody, Family, FamilyParams, UpdateFamilyBody } from './schemas.js';
import type { FamiliesService } from './service.js';

const TAGS = ['Families'];

export function familyRoutes(
  families: FamiliesService,
  erasure: Pick<ErasureService, 'eraseFamily'>,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    app.post(
      '/families',
      {
        config: { auth: surface.auth, scope: 'write:families', errors: [401, 403, 404] },
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

    const getFamily = keyedRead((principal, params) =>
      families.getFamily(principal, params.familyID as string),
    );
    app.get(
      '/families/:familyID',
      {
        config: {
          auth: surface.auth,
          scope: 'read:families',
          errors: [401, 403, 404],
          keyedRead: getFamily,
        },
        schema: {
          operationId: surface.operationId('getFamily'),
          summary: 'One family the caller can see',
          tags: TAGS,
          security: surface.security,
          params: FamilyParams,
          response: { 200: Family },
        },
      },
      async (request) => getFamily(requirePrincipal(request), request.params),
    );

    app.patch(
      '/families/:familyID',
      {
        config: { auth: surface.auth, scope: 'write:families', errors: [401, 403, 404] },
        schema: {
          operationId: surface.operationId('updateFamily'),
          summary: 'Rename a family, or move it to a test clock (owner or parent)',
          description:
            'Sandbox: `test_clock_id` attaches the family to a test clock (null: back to the real clock); its children take the ages of the new clock at once, applied like birthdays.',
          tags: TAGS,
          security: surface.security,
          params: FamilyParams,
          body: UpdateFamilyBody,
          response: { 200: Family },
        },
      },
      async (request) =>
        families.updateFamily(requirePrincipal(request), request.params.familyID, request.body),
    );

    app.delete(
      '/families/:familyID',
      {
        config: { auth: surface.auth, scope: 'write:families', errors: [401, 403, 404] },
        schema: {
          operationId: surface.operationId('deleteFamily'),
          summary: 'Erase a family with everything Haven holds about it (owner)',
          description:
            'In one transaction: its children with their age signals, policies, rules, devices and keys, reports and viewing history, enforcement jobs, its members, connections and their stored credentials, webhooks and deliveries, MCP tokens and its audit log. What Haven applied on each connected platform is released first, by a job holding the credentials sealed (7 days at most). The receipt: GET /erasures/{Haven-Erasure-Id}.',
          tags: TAGS,
          security: surface.security,
          params: FamilyParams,
          response: { 204: erasedResponse('family') },
        },
      },
      async (request, reply) => {
        const id = await erasure.eraseFamily(requirePrincipal(request), request.params.familyID);
        return reply.code(204).header(ERASURE_ID_HEADER, id).send(null);
      },
    );
  };
}
