// OCSS routes (CONTRACT.md §9: the signed routes) answer every client error with a `class`;
// the rest of the API never does. A route opts in with `config.ocss`; the cross-cutting
// layers (errors, rate limits, idempotency) ask here instead of knowing OCSS.
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An OCSS route: errors carry `class`; the body's `idempotency_key` counts as the header. */
    ocss?: { bodyIdempotencyKey?: boolean };
  }
}

const CLASS_BY_STATUS: Record<number, string> = {
  400: 'malformed',
  401: 'signature_invalid',
  409: 'replay',
  413: 'malformed',
  415: 'malformed',
  429: 'rate_limited',
  503: 'unavailable',
};

export function isOcssRoute(request: FastifyRequest): boolean {
  return request.routeOptions.config?.ocss !== undefined;
}

/**
 * The class of a client error on an OCSS route that did not name one itself (a schema
 * violation is `malformed`, a rate limit `rate_limited`); undefined elsewhere. A 500 never
 * has a class.
 */
export function ocssClassFor(request: FastifyRequest, status: number): string | undefined {
  if (!isOcssRoute(request) || (status >= 500 && status !== 503)) {
    return undefined;
  }
  return CLASS_BY_STATUS[status];
}

/** The Idempotency-Key header, or on OCSS routes the body's `idempotency_key`. */
export function idempotencyKeyOf(request: FastifyRequest): string | string[] | undefined {
  const header = request.headers['idempotency-key'];
  if (header !== undefined) {
    // A repeated header stays an array, which the idempotency layer refuses.
    return header;
  }
  if (request.routeOptions.config?.ocss?.bodyIdempotencyKey) {
    const body = request.body as { idempotency_key?: unknown } | undefined;
    if (typeof body?.idempotency_key === 'string' && body.idempotency_key !== '') {
      return body.idempotency_key;
    }
  }
  return undefined;
}
