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
        // `__proto__` and `constructor.prototype` keys are dropped, never merged.
        parsed = secureJson.parse(raw, undefined, {
          protoAction: 'remove',
          constructorAction: 'remove',
        });
      } catch {
        done(new BadRequestError('invalid JSON body'), undefined);
        return;
      }
      const unstorable = unstorableTextIn(parsed);
      if (unstorable) {
        done(new BadRequestError(unstorable), undefined);
        return;
      }
      done(null, parsed);
    },
  );
}
