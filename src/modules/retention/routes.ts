// CONTRACT.md §12.4: GET /api/v1/retention — open, answered from the configuration (no
// database), serialised once at start.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { RETENTION_DEFAULTS, type RetentionDays, retentionVariable } from '../../config.js';
import { sendPreSerialized } from '../../http/pre-serialized.js';

const Days = (what: string, field: keyof RetentionDays) =>
  Type.Integer({
    minimum: 1,
    description: `days ${what} is kept (${retentionVariable(field)}; default ${RETENTION_DEFAULTS[field]})`,
  });

export const RetentionPolicySchema = Type.Object(
  {
    viewing_history_days: Days('viewing history', 'viewing_history_days'),
    device_reports_days: Days('a device report', 'device_reports_days'),
    webhook_deliveries_days: Days('a finished webhook delivery', 'webhook_deliveries_days'),
    usage_days: Days('developer usage', 'usage_days'),
    audit_log_days: Days('an audit entry', 'audit_log_days'),
    erasure_receipts_days: Days('an erasure receipt', 'erasure_receipts_days'),
  },
  { $id: 'RetentionPolicy' },
);

/** Changes only with a restart (the environment), so caches may keep it a few minutes. */
const CACHE_CONTROL = 'public, max-age=300';

export function retentionRoutes(days: RetentionDays): FastifyPluginAsyncTypebox {
  const json = JSON.stringify(days);
  return async (app) => {
    app.get(
      '/api/v1/retention',
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'getRetentionPolicy',
          summary: 'How long Haven keeps each kind of record',
          description:
            'A daily purge removes what is older, by the clock that dated it: the family’s ' +
            '(a sandbox test clock’s time for a family on one) for viewing history, device ' +
            'reports and the audit log, the real clock for webhook deliveries, usage and ' +
            'erasure receipts. Each purge that removes something writes one ' +
            '`retention.purged` entry on the family’s or org’s audit log with the rows removed ' +
            'per table. Audit logs lose whole oldest prefixes, so a log verifies from its first ' +
            'kept entry.',
          tags: ['Retention'],
          response: { 200: RetentionPolicySchema },
        },
      },
      async (_request, reply) =>
        sendPreSerialized(reply.header('cache-control', CACHE_CONTROL), json),
    );
  };
}
