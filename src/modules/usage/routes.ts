// Spec: DeveloperUsage; CONTRACT.md §3 (GET /developers/orgs/{orgId}/usage).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionUserId } from '../../auth/principal.js';
import { DateTime, Uuid } from '../../http/common-schemas.js';
import { OrgParams } from '../orgs/schemas.js';
import type { UsageService } from './service.js';

const DeveloperUsage = Type.Object(
  {
    id: Uuid(),
    key_id: Uuid(),
    org_id: Uuid(),
    hour: DateTime('start of the UTC hour'),
    endpoint: Type.String({ description: 'route pattern, e.g. /api/v1/developer/families' }),
    status_2xx: Type.Integer(),
    status_4xx: Type.Integer(),
    status_5xx: Type.Integer(),
    total_requests: Type.Integer(),
  },
  { $id: 'DeveloperUsage' },
);

const DAYS_MESSAGE = 'days must be between 1 and 365';

const UsageQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 365, default: 30, 'x-error-message': DAYS_MESSAGE }),
  ),
  key_id: Type.Optional(Type.String({ format: 'uuid', 'x-error-message': 'invalid key ID' })),
});

export function usageRoutes(usage: UsageService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/developers/orgs/:orgId/usage',
      {
        config: { auth: 'session', errors: [401, 404] },
        schema: {
          operationId: 'getDeveloperUsage',
          summary: 'Hourly request counts of the org keys, newest hour first (lag ≤ 10 s)',
          tags: ['Usage'],
          security: [{ session: [] }],
          params: OrgParams,
          querystring: UsageQuery,
          response: { 200: Type.Array(DeveloperUsage) },
        },
      },
      async (request) =>
        usage.readUsage(sessionUserId(request), request.params.orgId, {
          days: request.query.days ?? 30,
          keyId: request.query.key_id,
        }),
    );
  };
}
