// GET /metrics (CONTRACT.md §13): the process's Prometheus exposition. With METRICS_TOKEN
// set it needs `Authorization: Bearer <token>`; unset, it is open on a sandbox deployment
// and not there at all in production (the same 404 as any unknown path), so a production
// deployment never shows its figures to whoever asks. Outside /api/v1, so never metered.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppEnv } from '../../config.js';
import { sendFailure } from '../../http/error-handler.js';
import type { Metrics } from '../../telemetry/metrics.js';

export const METRICS_PATH = '/metrics';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * Whether a request may read the metrics: its bearer's digest against each accepted one, in
 * constant time (digests have one length, so the comparison says nothing of the token's).
 */
function bearerMatches(header: string | undefined, tokenDigests: Buffer[]): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  if (match === null) {
    return false;
  }
  const digest = sha256(match[1] as string);
  return tokenDigests.some((accepted) => timingSafeEqual(digest, accepted));
}

export function metricsRoutes(
  metrics: Pick<Metrics, 'exposition' | 'contentType'>,
  options: { appEnv: AppEnv; tokens: string[] | undefined },
) {
  const tokenDigests = options.tokens?.map(sha256);
  return async (app: FastifyInstance) => {
    app.get(
      METRICS_PATH,
      {
        schema: {
          operationId: 'getMetrics',
          summary: "This process's Prometheus metrics",
          description:
            'Prometheus text exposition (version 0.0.4): request counts and latencies by route ' +
            'pattern, jobs, webhook deliveries, partner calls, the database pool, rate-limit ' +
            'refusals, age changes and the process metrics. With `METRICS_TOKEN` set it needs ' +
            '`Authorization: Bearer <token>`, one of its comma-separated tokens (else 401); unset, it is open in the ' +
            'sandbox and 404 in production. Never metered.',
          tags: ['Meta'],
          security: [{ metricsToken: [] }],
          response: {
            200: {
              description: 'The exposition',
              content: { 'text/plain; version=0.0.4': { schema: Type.String() } },
            },
          },
        },
        config: { answersWhileDraining: true, errors: [401, 404] },
      },
      async (request, reply) => {
        if (tokenDigests === undefined) {
          if (options.appEnv === 'production') {
            return reply.callNotFound();
          }
        } else if (!bearerMatches(request.headers.authorization, tokenDigests)) {
          reply.header('www-authenticate', 'Bearer realm="metrics"');
          return sendFailure(reply, { status: 401, message: 'invalid or missing metrics token' });
        }
        const text = await metrics.exposition();
        return reply.header('content-type', metrics.contentType).send(text);
      },
    );
  };
}
