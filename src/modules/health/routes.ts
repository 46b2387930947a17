// Spec: "Health and discovery" — GET /health.

import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorEnvelope } from '../../http/errors.js';
import type { HealthService } from './service.js';

const HealthOk = Type.Object({
  status: Type.Literal('ok'),
  environment: Type.String(),
  database: Type.Literal('ok'),
});

const HealthUnavailable = Type.Object({
  status: Type.Literal('unavailable'),
  error: Type.String(),
  message: Type.String(),
  code: Type.Integer(),
  database: Type.Literal('unavailable'),
});

export function healthRoutes(service: HealthService, environment: string) {
  return async (app: FastifyInstance) => {
    app.get(
      '/health',
      {
        schema: {
          operationId: 'getHealth',
          summary: 'Whether this instance can serve requests',
          description: 'Answers 200 while the database answers, 503 otherwise. Unmetered.',
          tags: ['Meta'],
          response: { 200: HealthOk, 503: HealthUnavailable },
        },
      },
      async (_request, reply) => {
        if ((await service.databaseStatus()) === 'ok') {
          return { status: 'ok' as const, environment, database: 'ok' as const };
        }
        return reply.code(503).send({
          status: 'unavailable' as const,
          ...errorEnvelope(503, 'database unavailable'),
          database: 'unavailable' as const,
        });
      },
    );
  };
}
