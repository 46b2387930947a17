// Spec: "Health and discovery" — GET /health.

import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { DRAINING_MESSAGE } from '../../http/draining.js';
import { errorEnvelope } from '../../http/errors.js';
import type { HealthService } from './service.js';

const HealthOk = Type.Object({
  status: Type.Literal('ok'),
  environment: Type.String(),
  database: Type.Literal('ok'),
});

const HealthUnavailable = Type.Object({
  status: Type.Union([Type.Literal('unavailable'), Type.Literal('draining')], {
    description:
      '`unavailable`: the database does not answer; `draining`: the instance is stopping ' +
      '(graceful shutdown; it still serves during SHUTDOWN_DELAY_SECONDS, then takes no new ' +
      'work); send traffic elsewhere',
  }),
  error: Type.String(),
  message: Type.String(),
  code: Type.Integer(),
  database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
});

export function healthRoutes(service: HealthService, environment: string) {
  return async (app: FastifyInstance) => {
    app.get(
      '/health',
      {
        schema: {
          operationId: 'getHealth',
          summary: 'Whether this instance can serve requests',
          description:
            'Answers 200 while the database answers; 503 `unavailable` when it does not, and ' +
            '503 `draining` while the instance shuts down gracefully. Unmetered.',
          tags: ['Meta'],
          response: { 200: HealthOk, 503: HealthUnavailable },
        },
        config: { answersWhileDraining: true },
      },
      async (_request, reply) => {
        const database = await service.databaseStatus();
        // From SIGTERM on, the shutdown delay included: a balancer reading /health moves its
        // traffic away while this instance still serves it.
        if (app.stopping) {
          return reply.code(503).send({
            status: 'draining' as const,
            ...errorEnvelope(503, DRAINING_MESSAGE),
            database,
          });
        }
        if (database === 'ok') {
          return { status: 'ok' as const, environment, database };
        }
        return reply.code(503).send({
          status: 'unavailable' as const,
          ...errorEnvelope(503, 'database unavailable'),
          database,
        });
      },
    );
  };
}
