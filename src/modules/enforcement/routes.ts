// CONTRACT.md §8 enforcement rows: POST /children/{childID}/enforce, GET
// /enforcement/jobs/{jobID}, GET /children/{childID}/enforcement/jobs, GET /enforce/history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import {
  ChildParams,
  EnforceBody,
  EnforcementJob,
  HistoryQuery,
  JobListQuery,
  JobParams,
} from './schemas.js';
import type { EnforcementService } from './service.js';

const TAGS = ['Enforcement'];

export function enforcementRoutes(
  enforcement: EnforcementService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = {
      auth: surface.auth,
      scope: 'read:enforcement' as const,
      errors: [401, 403, 404],
    };
    const write = { ...read, scope: 'write:enforcement' as const };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/children/:childID/enforce',
      {
        config: write,
        schema: {
          ...route('enforcePolicy', "Push the child's policy in force to the family's platforms"),
          description:
            'Queues an enforcement job (202, status pending); poll GET /enforcement/jobs/{jobID}. ' +
            'Every connected platform is attempted unless platform_ids names some.',
          params: ChildParams,
          body: EnforceBody,
          response: { 202: EnforcementJob },
        },
      },
      async (request, reply) =>
        reply
          .code(202)
          .send(
            await enforcement.enforce(
              requirePrincipal(request),
              request.params.childID,
              request.body ?? {},
            ),
          ),
    );

    app.get(
      '/enforcement/jobs/:jobID',
      {
        config: read,
        schema: {
          ...route('getEnforcementJob', 'One enforcement job with its per-platform results'),
          params: JobParams,
          response: { 200: EnforcementJob },
        },
      },
      async (request) => enforcement.getJob(requirePrincipal(request), request.params.jobID),
    );

    app.get(
      '/children/:childID/enforcement/jobs',
      {
        config: read,
        schema: {
          ...route('listChildEnforcementJobs', "The child's enforcement jobs, newest first"),
          params: ChildParams,
          querystring: JobListQuery,
          response: { 200: Type.Array(EnforcementJob) },
        },
      },
      async (request) =>
        enforcement.listChildJobs(
          requirePrincipal(request),
          request.params.childID,
          request.query.limit ?? 20,
        ),
    );

    app.get(
      '/enforce/history',
      {
        config: { ...read, errors: [401, 403] },
        schema: {
          ...route('listEnforcementHistory', 'Enforcement jobs of every family the caller reads'),
          querystring: HistoryQuery,
          response: { 200: Type.Array(EnforcementJob) },
        },
      },
      async (request) =>
        enforcement.listHistory(requirePrincipal(request), {
          limit: request.query.limit ?? 20,
          offset: request.query.offset ?? 0,
        }),
    );
  };
}
