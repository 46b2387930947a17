// GET /health/live and GET /health/ready (CONTRACT.md §13): the probes an orchestrator and a
// load balancer ask. Liveness says only that the process runs and answers HTTP (a failing one
// gets the process restarted, so it stays 200 while draining); readiness says whether to
// send it work. Outside /api/v1, so never metered; both answer for themselves while the
// instance drains.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorEnvelope } from '../../http/errors.js';
import { isReady, notReadyMessage, type Readiness } from './readiness.js';

export const LIVE_PATH = '/health/live';
export const READY_PATH = '/health/ready';

const Live = Type.Object({ status: Type.Literal('ok') });

const Checks = Type.Object({
  database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')], {
    description: 'Whether the database answered a ping (kept for a second)',
  }),
  redis: Type.Union(
    [Type.Literal('ok'), Type.Literal('unavailable'), Type.Literal('not_configured')],
    { description: 'Whether Redis answered a ping; `not_configured` without REDIS_URL' },
  ),
  draining: Type.Boolean({
    description:
      'True once the process was told to stop: from SIGTERM on, through the shutdown delay ' +
      '(SHUTDOWN_DELAY_SECONDS) while requests are still served, and the drain after it',
  }),
});

const Ready = Type.Object({ status: Type.Literal('ok'), checks: Checks });

const NotReady = Type.Object({
  status: Type.Literal('unavailable'),
  error: Type.String(),
  message: Type.String(),
  code: Type.Integer(),
  checks: Checks,
});

export function probeRoutes(readiness: Pick<Readiness, 'check'>) {
  return async (app: FastifyInstance) => {
    app.get(
      LIVE_PATH,
      {
        schema: {
          operationId: 'getLiveness',
          summary: 'Whether this process runs (liveness probe)',
          description:
            'Always 200 while the process answers HTTP, draining included: restart the ' +
            'process only when this fails. Checks no dependency. Unmetered.',
          tags: ['Meta'],
          response: { 200: Live },
        },
        config: { answersWhileDraining: true },
      },
      async () => ({ status: 'ok' as const }),
    );

    app.get(
      READY_PATH,
      {
        schema: {
          operationId: 'getReadiness',
          summary: 'Whether to send this process work (readiness probe)',
          description:
            '200 while the database answers, Redis answers (when REDIS_URL is set) and the ' +
            'process is not stopping; else 503 naming what failed. On SIGTERM it turns 503 at ' +
            'once, while requests are still served for SHUTDOWN_DELAY_SECONDS. Unmetered.',
          tags: ['Meta'],
          response: { 200: Ready, 503: NotReady },
        },
        config: { answersWhileDraining: true },
      },
      async (_request, reply) => {
        const checks = await readiness.check();
        if (isReady(checks)) {
          return { status: 'ok' as const, checks };
        }
        return reply.code(503).send({
          status: 'unavailable' as const,
          ...errorEnvelope(503, notReadyMessage(checks)),
          checks,
        });
      },
    );
  };
}
