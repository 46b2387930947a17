// Headers every response carries, whatever route or error produced it.
import type { FastifyInstance } from 'fastify';

export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
  });
}
