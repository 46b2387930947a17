// Signed reads (the CSM bulk read) answered ahead of Fastify (see http/fast-path.ts). Ed25519
// runs on libuv's pool either way; what the router adds on the main thread (routing, a
// dozen hooks, the body parser's streams, validation, the reply's machinery, serializing
// the same 8 KB page again) cost ~3.5 times the unavoidable work of the bench's floor
// (decisions: "Signed reads ahead of the router"). A route opts in by declaring
// `config.signedRead`: its answer for a signer and a body, given only when that answer is
// its 200 without further reads. The path verifies the request with the route's own
// verifier (signature-guard.ts), then counts it in the client's bucket and claims its nonce,
// and only past that point answers anything itself: a replay (409) or a nonce store that
// fails (503), in the envelope the error handler writes. Everything else goes to the route:
// untouched when the headers already say so (not exactly the route's POST, a body type
// other than application/json, no or a large Content-Length, chunked, an Idempotency-Key,
// no signature, draining), and otherwise with the body it read (http/kept-body.ts), so the
// route answers every failure, a 429 included, exactly as it would have.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, RouteOptions } from 'fastify';
import type { Clock } from '../../clock.js';
import type { InFlight } from '../../http/draining.js';
import { answerMetered, type FastPathHandler, failureAnswer } from '../../http/fast-path.js';
import { parseJsonBody } from '../../http/json-body.js';
import { keepBodyForRoute, readBody } from '../../http/kept-body.js';
import { requestIdFor } from '../../http/request-log.js';
import { routeSerializers, type SerializerCompiler } from '../../http/route-serializers.js';
import type { NonceStore } from '../../ocss/nonce-store.js';
import { claimNonce } from '../../ocss/verify-signed-request.js';
import { allowedNow, DEFAULT_LIMIT } from '../../ratelimit/plugin.js';
import type { RateLimitStore } from '../../ratelimit/stores.js';
import type { SignerCheck } from './signature-guard.js';
import type { PublishedEntry } from './trust-list-service.js';

/**
 * What a signed route answers this signer for this body (parsed JSON), when that is its 200
 * and needs no read; undefined leaves the request to the route. An answer is an immutable
 * value: its serialized form is kept per answer object.
 */
export type SignedRead = (signer: PublishedEntry, body: unknown) => object | undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's answer for a signed request, answered ahead of the router when it can. */
    signedRead?: SignedRead;
  }
}

/** Larger bodies are the route's: a bulk read of 100 slugs is ~21 KB. */
const MAX_BODY_BYTES = 64 * 1024;

export interface SignedReadOptions {
  /** The route's verifier; the nonce is claimed here, once the answer is known. */
  check: SignerCheck;
  nonces: NonceStore;
  /** In-process buckets (see allowedNow): public routes count per client address. */
  buckets: RateLimitStore;
  clientAddress(request: IncomingMessage): string;
  clock: Clock;
  /** Fastify's compiler; read on first use, once the app has set it up. */
  serializerCompiler(): SerializerCompiler;
  /** Requests in hand hold a drain like routed ones. */
  inFlight: InFlight;
  draining(): boolean;
  log: FastifyBaseLogger;
}

/** A Content-Length this path reads: present, canonical digits, within MAX_BODY_BYTES. */
function readableLength(value: string | undefined): boolean {
  return value !== undefined && /^[1-9][0-9]{0,5}$/.test(value) && Number(value) <= MAX_BODY_BYTES;
}

/**
 * An onRoute step: a fast path for the route if it declares a signed read this path can
 * take, to be added to the server's fast paths.
 */
export function signedReadFastPath(
  route: RouteOptions,
  options: SignedReadOptions,
): FastPathHandler | undefined {
  const read = route.config?.signedRead;
  if (route.method !== 'POST' || !read || /[:*]/.test(route.url)) {
    return undefined;
  }
  const path = route.url;
  const answerFor: SignedRead = read;
  const serializerFor = routeSerializers(route, options.serializerCompiler);
  const serialized = new WeakMap<object, Buffer>();

  /** Whether the headers leave the request to this path (else the route gets it untouched). */
  function takes(request: IncomingMessage): boolean {
    const headers = request.headers;
    return (
      request.method === 'POST' &&
      request.url === path &&
      headers['content-type'] === 'application/json' &&
      headers['transfer-encoding'] === undefined &&
      readableLength(headers['content-length']) &&
      headers['idempotency-key'] === undefined &&
      headers.signature !== undefined &&
      headers['signature-input'] !== undefined &&
      !options.draining()
    );
  }

  /** The route's answer and the verified nonce, or undefined: the route must answer. */
  async function prepare(request: IncomingMessage, body: Buffer) {
    try {
      // As the route's parser reads it: a body it would refuse (unstorable text, say) is
      // left to it, never read more leniently here.
      const parsed = parseJsonBody(body);
      const { signer, verified } = await options.check(
        { method: 'POST', url: path, headers: request.headers, body },
        null,
      );
      const answer = answerFor(signer, parsed);
      return answer && { answer, verified };
    } catch {
      return undefined;
    }
  }

  /**
   * The answer's bytes: serialized once per answer object (answers are immutable), and kept
   * encoded, so a page is not turned into UTF-8 again for every request that asks for it.
   */
  function bytesOf(answer: object): Buffer {
    let bytes = serialized.get(answer);
    if (bytes === undefined) {
      bytes = Buffer.from(serializerFor(200)(answer), 'utf8');
      serialized.set(answer, bytes);
    }
    return bytes;
  }

  async function attempt(
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<string | false> {
    // A client gone mid-body rejects here: the connection is closed and nothing answered
    // or logged, as for a routed request its client abandoned (see FastPath).
    const body = await readBody(request);
    keepBodyForRoute(request, body);
    const prepared = await prepare(request, body);
    const decision =
      prepared &&
      allowedNow(
        options.buckets,
        `ip:${options.clientAddress(request)}`,
        DEFAULT_LIMIT,
        options.clock.now().getTime(),
      );
    if (!prepared || !decision) {
      return false;
    }
    // Counted: from here on this path answers whatever happens.
    const requestId = requestIdFor(request);
    let status = 200;
    let answer: string | Buffer;
    try {
      await claimNonce(options.nonces, prepared.verified);
      answer = bytesOf(prepared.answer);
    } catch (error) {
      ({ status, body: answer } = failureAnswer(
        error as Error,
        options.log,
        requestId,
        serializerFor,
      ));
    }
    return answerMetered(
      request,
      response,
      status,
      decision,
      answer,
      options.draining(),
      requestId,
    );
  }

  return {
    route: path,
    path(request, response) {
      if (!takes(request)) {
        return false;
      }
      options.inFlight.enter();
      response.once('close', options.inFlight.leave);
      return attempt(request, response);
    },
  };
}
