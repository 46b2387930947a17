// Metering (CONTRACT.md §4): every request under /api/v1 (but the Annex B editions) counts
// against one bucket: its org for API keys, its user for sessions and MCP tokens, its device
// for device keys, its client IP otherwise (including failed authentication). Headers go on every metered response.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { pathOf } from '../http/access-log.js';
import { AppError } from '../http/errors.js';
import { isInternalCall } from '../http/internal-calls.js';
import { isOcssRoute } from '../http/ocss-route.js';
import { isMeteredPath } from '../http/route-classes.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { WindowDecision } from './sliding-window.js';
import type { RateLimitStore } from './stores.js';

export const DEFAULT_LIMIT = 100;

export interface RateLimitDeps {
  store: RateLimitStore;
  clock: Clock;
  /** The org's `rate_limit_rpm` (cached briefly by the caller: a number when it is). */
  orgLimit(orgId: string): number | Promise<number>;
  /**
   * Counts every 429 (haven_rate_limited_total). The fast paths never refuse: a full bucket is
   * handed to its route (allowedNow), refused and counted here, once.
   */
  metrics: Pick<Metrics, 'rateLimited'>;
}

type BucketKind = 'org' | 'user' | 'device' | 'ip';

/** A device agent's own bucket (the poll's fast path counts in the same one). */
export function deviceBucket(deviceId: string): string {
  return `device:${deviceId}`;
}

/** An org's bucket, shared by all its keys (the keyed catalog's fast path counts in it too). */
export function orgBucket(orgId: string): string {
  return `org:${orgId}`;
}

/** Where a request counts; the org's limit is looked up separately (it may need a read). */
function bucketOf(request: FastifyRequest): { key: string; kind: BucketKind } {
  if (request.device) {
    // One device agent cannot use up its family's or anyone else's allowance.
    return { key: deviceBucket(request.device.id), kind: 'device' };
  }
  const principal = request.principal;
  switch (principal?.kind) {
    case 'key':
      return { key: orgBucket(principal.orgId), kind: 'org' };
    case 'user':
    case 'mcp':
      return { key: `user:${principal.userId}`, kind: 'user' };
    default:
      // No credential (a sandbox caller), a failed one, or a public route.
      return { key: `ip:${request.ip}`, kind: 'ip' };
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T>)?.then === 'function';
}

/**
 * A fast path's hit (http/fast-path.ts): counted in an in-process bucket only when allowed
 * (a refused hit adds nothing), so a full bucket can be handed to the route, which counts it,
 * refused again, and answers 429 in the envelope. Undefined means: hand the request over
 * (a full bucket, or a store that answers asynchronously, after which the request could no
 * longer be handed over uncounted).
 */
export function allowedNow(
  store: RateLimitStore,
  bucket: string,
  limit: number,
  now: number,
): WindowDecision | undefined {
  if (!store.synchronous) {
    return undefined;
  }
  const decision = store.hit(bucket, limit, now) as WindowDecision;
  return decision.allowed ? decision : undefined;
}

/** The rate-limit headers of a decision, as every metered response carries them. */
export function rateLimitHeaders(decision: WindowDecision) {
  return {
    'x-ratelimit-limit': decision.limit,
    'x-ratelimit-remaining': decision.remaining,
    'x-ratelimit-reset': decision.resetAt,
  };
}

function setHeaders(reply: FastifyReply, decision: WindowDecision): void {
  reply.headers(rateLimitHeaders(decision));
}

// The common case (a cached org limit, in-process buckets) runs synchronously: a metered
// request then waits for no promise here; Redis buckets and a first org lookup take the
// asynchronous branch with the same outcome.
export function installRateLimit(app: FastifyInstance, deps: RateLimitDeps): void {
  type Done = (error?: Error) => void;

  /** Sets the headers; answers or refuses when the window is full, else lets it through. */
  function conclude(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: BucketKind,
    decision: WindowDecision,
    done: Done,
  ): void {
    setHeaders(reply, decision);
    if (decision.allowed) {
      done();
      return;
    }
    deps.metrics.rateLimited();
    if (kind === 'ip' && !isOcssRoute(request)) {
      reply.header('x-ratelimit-remaining', 0);
      reply.header('retry-after', 60);
      reply.code(429).type('text/plain; charset=utf-8').send('Too Many Requests');
      return;
    }
    reply.header('retry-after', kind === 'ip' ? 60 : decision.retryAfter);
    done(new AppError(429, 'rate limit exceeded'));
  }

  function count(
    request: FastifyRequest,
    reply: FastifyReply,
    bucket: { key: string; kind: BucketKind },
    limit: number,
    done: Done,
  ): void {
    const decision = deps.store.hit(bucket.key, limit, deps.clock.now().getTime());
    if (isPromise(decision)) {
      decision.then((settled) => conclude(request, reply, bucket.kind, settled, done), done);
      return;
    }
    conclude(request, reply, bucket.kind, decision, done);
  }

  app.addHook('onRequest', (request, reply, done) => {
    // A tool call's REST request was metered as the /mcp request that made it.
    if (!isMeteredPath(pathOf(request.url)) || isInternalCall(request)) {
      done();
      return;
    }
    const bucket = bucketOf(request);
    const principal = request.principal;
    const limit =
      bucket.kind === 'org' && principal?.kind === 'key'
        ? deps.orgLimit(principal.orgId)
        : DEFAULT_LIMIT;
    if (isPromise(limit)) {
      limit.then((known) => count(request, reply, bucket, known, done), done);
      return;
    }
    count(request, reply, bucket, limit, done);
  });
}
