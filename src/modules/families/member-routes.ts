// CONTRACT.md §7: family members (`{memberID}` is the member's own id).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import {
  AddFamilyMemberBody,
  ChangeFamilyMemberBody,
  FamilyMember,
  FamilyMemberParams,
  FamilyParams,
} from './schemas.js';
import type { FamiliesService } from './service.js';

const TAGS = ['Families'];

export function familyMemberRoutes(
  families: FamiliesService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:families' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:families' as const, errors: [401, 403, 404, 409] };

    app.get(
      '/families/:familyID/members',
      {
        config: read,
        schema: {
          operationId: surface.operationId('listFamilyMembers'),
          summary: 'The members of a family',
          tags: TAGS,
          security: surface.security,
          params: FamilyParams,
          response: { 200: Type.Array(FamilyMember) },
        },
      },
      async (request) => families.listMembers(requirePrincipal(request), request.params.familyID),
    );

    app.post(
      '/families/:familyID/members',
      {
        config: write,
        schema: {
          operationId: surface.operationId('addFamilyMember'),
          summary: 'Add a user to a family (owner)',
          tags: TAGS,
          security: surface.security,
          params: FamilyParams,
          body: AddFamilyMemberBody,
          response: { 201: FamilyMember },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await families.addMember(
              requirePrincipal(request),
              request.params.familyID,
              request.body,
            ),
          ),
    );

    app.patch(
      '/families/:familyID/members/:memberID',
      {
        config: write,
        schema: {
          operationId: surface.operationId('updateFamilyMember'),
          summary: 'Change a member’s role (owner); the last owner stays',
          tags: TAGS,
          security: surface.security,
          params: FamilyMemberParams,
          body: ChangeFamilyMemberBody,
          response: { 200: FamilyMember },
        },
      },
      async (request) => {
        const { familyID, memberID } = request.params;
        return families.changeMember(requirePrincipal(request), familyID, memberID, request.body);
      },
    );

    app.delete(
      '/families/:familyID/members/:memberID',
      {
        config: write,
        schema: {
          operationId: surface.operationId('removeFamilyMember'),
          summary: 'Remove a member (owner); the last owner stays',
          tags: TAGS,
          security: surface.security,
          params: FamilyMemberParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        const { familyID, memberID } = request.params;
        await families.changeMember(requirePrincipal(request), familyID, memberID, 'delete');
        return reply.code(204).send(null);
      },
    );
  };
}
