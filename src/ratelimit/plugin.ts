// Metering (CONTRACT.md §4): every request under /api/v1 (but the Annex B editions) counts
// against one bucket: its org for API keys, its user for sessions and MCP tokens, its device
// for device keys, its client IP otherwise (including failed authentication). Headers go on every metered response.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { AppError } from '../http/errors.js';
import { isInternalCall } from '../http/internal-calls.js';
import { isOcssRoute } from '../http/ocss-route.js';
import { isMeteredPath } from '../http/route-classes.js';
import type { WindowDecision } from './sliding-window.js';
import type { RateLimitStore } from './stores.js';

export const DEFAULT_LIMIT = 100;

export interface RateLimitDeps {
  store: RateLimitStore;
  clock: Clock;
  /** The org's `rate_limit_rpm` (cached briefly by the caller). */
  orgLimit(orgId: string): Promise<number>;
}

interface Bucket {
  key: string;
  limit: number;
  kind: 'org' | 'user' | 'device' | 'ip';
}

async function bucketOf(request: FastifyRequest, deps: RateLimitDeps): Promise<Bucket> {
  if (request.device) {
    // One device agent cannot use up its family's or anyone else's allowance.
    return { key: `device:${request.device.id}`, limit: DEFAULT_LIMIT, kind: 'device' };
  }
  const principal = request.principal;
  switch (principal?.kind) {
    case 'key':
      return {
        key: `org:${principal.orgId}`,
        limit: await deps.orgLimit(principal.orgId),
        kind: 'org',
      };
    case 'user':
    case 'mcp':
      return { key: `user:${principal.userId}`, limit: DEFAULT_LIMIT, kind: 'user' };
    default:
      // No credential (a sandbox caller), a failed one, or a public route.
      return { key: `ip:${request.ip}`, limit: DEFAULT_LIMIT, kind: 'ip' };
  }
}

function setHeaders(reply: FastifyReply, decision: WindowDecision): void {
  reply.header('x-ratelimit-limit', decision.limit);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', decision.resetAt);
}

export function installRateLimit(app: FastifyInstance, deps: RateLimitDeps): void {
  /** Resolves true when it answered the request itself (the IP bucket's plain 429). */
  async function meter(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const bucket = await bucketOf(request, deps);
    const decision = await deps.store.hit(bucket.key, bucket.limit, deps.clock.now().getTime());
    setHeaders(reply, decision);
    if (decision.allowed) {
      return false;
    }
    if (bucket.kind === 'ip' && !isOcssRoute(request)) {
      reply.header('x-ratelimit-remaining', 0);
      reply.header('retry-after', 60);
      reply.code(429).type('text/plain; charset=utf-8').send('Too Many Requests');
      return true;
    }
    reply.header('retry-after', bucket.kind === 'ip' ? 60 : decision.retryAfter);
    throw new AppError(429, 'rate limit exceeded');
  }

  app.addHook('onRequest', (request, reply, done) => {
    // A tool call's REST request was metered as the /mcp request that made it.
    if (!isMeteredPath(request.url.split('?')[0] ?? '') || isInternalCall(request)) {
      done();
      return;
    }
    meter(request, reply).then((answered) => {
      if (!answered) {
        done();
      }
    }, done);
  });
}
