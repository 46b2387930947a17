// JSON is the only request body Haven parses. The raw bytes are kept, because an
// Idempotency-Key replay must be byte-identical, and signatures cover the exact body.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { BadRequestError } from './errors.js';
import { unstorableTextIn } from './storable-text.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received, when the request had one. */
    rawBody?: Buffer;
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A JSON body as every route reads it: `__proto__` and `constructor.prototype` keys dropped,
 * never merged, and text PostgreSQL cannot store refused. Throws BadRequestError. Fast paths
 * that read bodies parse with it too, so they take exactly what the routes take.
 */
export function parseJsonBody(raw: Buffer): unknown {
  let parsed: unknown;
  try {
    parsed = secureJson.parse(raw, undefined, {
      protoAction: 'remove',
      constructorAction: 'remove',
    });
  } catch {
    throw new BadRequestError('invalid JSON body');
  }
  const unstorable = unstorableTextIn(parsed);
  if (unstorable) {
    throw new BadRequestError(unstorable);
  }
  return parsed;
}

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      const raw = body as Buffer;
      request.rawBody = raw;
      if (raw.length === 0) {
        done(null, undefined);
        return;
      }
      let parsed: unknown;
      try {
        parsed = parseJsonBody(raw);
      } catch (error) {
        done(error as BadRequestError, undefined);
        return;
      }
      done(null, parsed);
    },
  );
}
