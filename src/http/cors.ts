// Cross-origin policy: any origin may call Haven from a browser, without credentials. Haven
// takes no cookies or other ambient credentials, only headers a page must hold itself (a
// bearer token, an API key, a device key), so a foreign page gains nothing it could not do
// from a server; what it needs is to read the answers and the headers that matter. See
// docs/decisions.md ("Cross-origin requests").
import type { FastifyInstance } from 'fastify';

/**
 * Headers a browser client reads: request ids, rate limits, caching, replays, deprecation, and
 * the erasure a DELETE made.
 */
export const CORS_EXPOSED_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'etag',
  'location',
  'ocss-replay',
  'deprecation',
  'sunset',
  'link',
  'haven-erasure-id',
].join(', ');

const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'if-none-match',
  'x-api-key',
  'x-device-key',
  'x-request-id',
  'x-sandbox-session',
  'ocss-spec-version',
  'signature',
  'signature-input',
  'content-digest',
].join(', ');

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** Seconds a browser may reuse a preflight answer (Chromium caps it at 7200). */
const PREFLIGHT_MAX_AGE = 600;

/**
 * Registered before authentication and metering: a preflight is answered here, so it is
 * never refused for a missing credential nor counted against anyone's rate limit.
 */
export function installCors(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('access-control-allow-origin', '*');
    const preflight =
      request.method === 'OPTIONS' && request.headers['access-control-request-method'];
    if (!preflight) {
      reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS);
      done();
      return;
    }
    reply
      .code(204)
      .header('access-control-allow-methods', ALLOWED_METHODS)
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', PREFLIGHT_MAX_AGE)
      .send();
  });
}
