// A fast path that reads a request's body (http/fast-path.ts) may still leave the request to
// its route, which must then see the body it would have read itself. The fast path keeps the
// bytes it read on the request; the route's preParsing hook gives Fastify's body parser a
// stream of exactly those, so every limit, parser and error the route applies applies
// unchanged.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { preParsingHookHandler } from 'fastify';

const KEPT = Symbol('haven.keptBody');

type WithKeptBody = IncomingMessage & { [KEPT]?: Buffer };

/** Keeps the body read of `request` for its route. */
export function keepBodyForRoute(request: IncomingMessage, body: Buffer): void {
  (request as WithKeptBody)[KEPT] = body;
}

/**
 * The preParsing hook of a route whose fast path reads bodies: the kept body in place of the
 * (already consumed) request stream. Requests that reached the route directly pass unchanged.
 */
export const replayKeptBody: preParsingHookHandler = (request, _reply, payload, done) => {
  const kept = (request.raw as WithKeptBody)[KEPT];
  if (kept === undefined) {
    done(null, payload);
    return;
  }
  const replayed = new Readable({
    read() {
      this.push(kept);
      this.push(null);
    },
  });
  done(null, replayed);
};

/**
 * The body of `request` (a fast path reads only bodies whose Content-Length it accepts; Node's
 * parser holds the body to that length). Rejects when the client goes away mid-body.
 */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    );
    request.on('error', reject);
    request.on('close', () => {
      // `close` follows `end` on every request: an error (and its stack) only when it did not.
      if (!request.complete) {
        reject(new Error('the request closed before its body ended'));
      }
    });
  });
}
