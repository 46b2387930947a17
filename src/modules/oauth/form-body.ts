// application/x-www-form-urlencoded bodies, for the token endpoint only (OAuth clients post
// forms: RFC 6749 §4.1.3). Installed inside the token route's plugin, so Fastify's
// encapsulation keeps the rest of the API JSON-only. Same 1 MiB limit as JSON.
import type { FastifyInstance } from 'fastify';
import { BODY_LIMIT_BYTES } from '../../http/json-body.js';

/**
 * Parameters by name; a repeated name becomes an array, which the body schema then refuses
 * (RFC 6749 §3.2: parameters MUST NOT be included more than once). The object has no
 * prototype, so a `__proto__` parameter is just a name.
 */
export function parseFormBody(raw: Buffer): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    const seen = fields[name];
    fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return fields;
}

export function installFormBodyParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      request.rawBody = body as Buffer;
      done(null, parseFormBody(body as Buffer));
    },
  );
}
