// Spec: "Developer organizations"; CONTRACT.md §3 (orgs and members).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionPrincipal, sessionUserId } from '../../auth/principal.js';
import {
  AddMemberBody,
  CreateOrgBody,
  DeveloperOrg,
  DeveloperOrgMember,
  OrgMemberParams,
  OrgParams,
} from './schemas.js';
import type { OrgsService } from './service.js';

const TAGS = ['Developer orgs'];
const SESSION = { auth: 'session' as const };

export function orgRoutes(orgs: OrgsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/developers/orgs',
      {
        config: { ...SESSION, errors: [401] },
        schema: {
          operationId: 'createDeveloperOrg',
          summary: 'Create a developer org (the caller becomes its owner)',
          tags: TAGS,
          security: [{ session: [] }],
          body: CreateOrgBody,
          response: { 201: DeveloperOrg },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await orgs.createOrg(sessionPrincipal(request), request.body)),
    );

    app.get(
      '/api/v1/developers/orgs',
      {
        config: { ...SESSION, errors: [401] },
        schema: {
          operationId: 'listDeveloperOrgs',
          summary: 'The orgs the caller belongs to',
          tags: TAGS,
          security: [{ session: [] }],
          response: { 200: Type.Array(DeveloperOrg) },
        },
      },
      async (request) => orgs.listOrgs(sessionUserId(request)),
    );

    app.get(
      '/api/v1/developers/orgs/:orgId',
      {
        config: { ...SESSION, errors: [401, 404] },
        schema: {
          operationId: 'getDeveloperOrg',
          summary: 'One org the caller belongs to',
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgParams,
          response: { 200: DeveloperOrg },
        },
      },
      async (request) => orgs.getOrg(sessionUserId(request), request.params.orgId),
    );

    app.post(
      '/api/v1/developers/orgs/:orgId/members',
      {
        config: { ...SESSION, errors: [401, 403, 404, 409] },
        schema: {
          operationId: 'addDeveloperOrgMember',
          summary: 'Add a user to the org (owner or admin)',
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgParams,
          body: AddMemberBody,
          response: { 201: DeveloperOrgMember },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await orgs.addMember(sessionPrincipal(request), request.params.orgId, request.body),
          ),
    );

    app.get(
      '/api/v1/developers/orgs/:orgId/members',
      {
        config: { ...SESSION, errors: [401, 404] },
        schema: {
          operationId: 'listDeveloperOrgMembers',
          summary: 'The members of the org',
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgParams,
          response: { 200: Type.Array(DeveloperOrgMember) },
        },
      },
      async (request) => orgs.listMembers(sessionUserId(request), request.params.orgId),
    );

    app.delete(
      '/api/v1/developers/orgs/:orgId/members/:userId',
      {
        config: { ...SESSION, errors: [401, 403, 404, 409] },
        schema: {
          operationId: 'removeDeveloperOrgMember',
          summary: 'Remove a member (owner or admin; anyone may leave; the last owner stays)',
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgMemberParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        const { orgId, userId } = request.params;
        await orgs.removeMember(sessionPrincipal(request), orgId, userId);
        return reply.code(204).send(null);
      },
    );
  };
}
