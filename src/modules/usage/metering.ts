// Counts every request a key authenticated (whatever its status) and stamps key and MCP
// token use, through the in-memory recorder flushed every few seconds and at shutdown.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import { endpointPattern, type UsageRecorder } from './recorder.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Writes buffered usage now (shutdown does it too). */
    flushUsage(): Promise<void>;
  }
}

export function installUsageMetering(
  app: FastifyInstance,
  recorder: UsageRecorder,
  clock: Clock,
): void {
  app.addHook('onResponse', (request, reply, done) => {
    const principal = request.principal;
    const route = request.routeOptions.url;
    if (!principal || !route) {
      done();
      return;
    }
    if (principal.kind === 'key') {
      recorder.recordKeyRequest({
        keyId: principal.keyId,
        orgId: principal.orgId,
        endpoint: endpointPattern(route),
        status: reply.statusCode,
        at: clock.now(),
        ip: request.ip,
      });
    } else if (principal.kind === 'mcp') {
      recorder.recordTokenUse(principal.tokenId, clock.now(), request.ip);
    }
    done();
  });

  app.decorate('flushUsage', () => recorder.flush());
  app.addHook('onClose', () => recorder.close());
}
