// CONTRACT.md §12.1: reading the audit log. Nothing writes an entry through HTTP: each change
// states its own (db/transaction-effects.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requirePrincipal, sessionUserId } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { FamilyParams } from '../families/schemas.js';
import { OrgParams } from '../orgs/schemas.js';
import { AuditHeadSchema, AuditPageSchema, AuditQuery } from './schemas.js';
import { type AuditService, MAX_PAGE } from './service.js';

const TAGS = ['Audit log'];

const pageLimit = (limit: number | undefined) => Math.min(limit ?? 50, MAX_PAGE);

export function familyAuditRoutes(audit: AuditService): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = {
      auth: surface.auth,
      scope: 'read:families' as const,
      errors: [400, 401, 403, 404],
    };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.get(
      '/families/:familyID/audit-log',
      {
        config: read,
        schema: {
          ...route('listFamilyAuditLog', "The family's audit log, newest first"),
          params: FamilyParams,
          querystring: AuditQuery,
          response: { 200: AuditPageSchema },
        },
      },
      async (request) =>
        audit.familyLog(
          requirePrincipal(request),
          request.params.familyID,
          pageLimit(request.query.limit),
          request.query.before,
        ),
    );

    app.get(
      '/families/:familyID/audit-log/head',
      {
        config: read,
        schema: {
          ...route('getFamilyAuditHead', "The family's audit log head, signed by the steward key"),
          params: FamilyParams,
          response: { 200: AuditHeadSchema },
        },
      },
      async (request) => audit.familyHead(requirePrincipal(request), request.params.familyID),
    );
  };
}

export function orgAuditRoutes(audit: AuditService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/developers/orgs/:orgId/audit-log',
      {
        config: { auth: 'session', errors: [400, 401, 403, 404] },
        schema: {
          operationId: 'listOrgAuditLog',
          summary: "The org's audit log, newest first (owners and admins)",
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgParams,
          querystring: AuditQuery,
          response: { 200: AuditPageSchema },
        },
      },
      async (request) =>
        audit.orgLog(
          sessionUserId(request),
          request.params.orgId,
          pageLimit(request.query.limit),
          request.query.before,
        ),
    );
  };
}
