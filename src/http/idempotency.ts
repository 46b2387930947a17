// Idempotency-Key on every POST/PUT/PATCH/DELETE under /api/v1 (CONTRACT.md §5). Receipts
// live in the database, so a replay is answered the same after a restart and on any instance.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import { BadRequestError, ConflictError } from './errors.js';
import {
  claimReceipt,
  completeReceipt,
  deleteExpiredReceipts,
  findReceipt,
  type ReceiptId,
  releaseReceipt,
} from './idempotency-store.js';
import { idempotencyKeyOf } from './ocss-route.js';
import { isApiPath, isMutatingMethod } from './route-classes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who is calling, for keying receipts: set by authentication; anonymous sandbox callers
     * are keyed by their sandbox session.
     */
    callerKey: string | null;
    idempotentReceipt: ReceiptId | null;
  }
}

export const RECEIPT_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight claim older than this belongs to a request whose process died. */
export const IN_FLIGHT_LEASE_MS = 60 * 1000;
const CLEANUP_EVERY_MS = 10 * 60 * 1000;
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

function anonymousCaller(request: FastifyRequest): string {
  const session = request.headers['x-sandbox-session'];
  return `anonymous:${typeof session === 'string' && session !== '' ? session : 'default'}`;
}

/** Byte-identical means the same query string and the same raw body. */
function fingerprintOf(request: FastifyRequest): string {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  return createHash('sha256')
    .update(query)
    .update('\n')
    .update(request.rawBody ?? Buffer.alloc(0))
    .digest('hex');
}

function payloadText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) {
    return '';
  }
  if (typeof payload === 'string') {
    return payload;
  }
  if (Buffer.isBuffer(payload)) {
    return payload.toString('utf8');
  }
  return undefined; // a stream: cannot be kept, so it is not replayable
}

export function installIdempotency(app: FastifyInstance, db: Db, clock: Clock): void {
  app.decorateRequest('callerKey', null);
  app.decorateRequest('idempotentReceipt', null);

  /** Claims the key, or answers from the receipt (then resolves true), or refuses (409). */
  async function claimOrReplay(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string | string[],
  ): Promise<boolean> {
    if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
      throw new BadRequestError('Idempotency-Key must be 1-255 printable characters');
    }
    const id: ReceiptId = {
      caller: request.callerKey ?? anonymousCaller(request),
      method: request.method,
      path: request.url.split('?')[0] ?? request.url,
      key: header,
    };
    const fingerprint = fingerprintOf(request);
    const now = clock.now();
    const claimed = await claimReceipt(db, {
      ...id,
      fingerprint,
      now,
      lockedUntil: new Date(now.getTime() + IN_FLIGHT_LEASE_MS),
      expiresAt: new Date(now.getTime() + RECEIPT_TTL_MS),
    });
    if (claimed) {
      request.idempotentReceipt = id;
      return false;
    }
    const receipt = await findReceipt(db, id);
    if (!receipt) {
      // Expired and swept between our two statements: extremely rare; ask for a retry.
      throw new ConflictError('Idempotency-Key is being reset; retry the request');
    }
    if (receipt.fingerprint !== fingerprint) {
      throw new ConflictError('Idempotency-Key was already used with a different request body');
    }
    if (receipt.state === 'in_flight') {
      throw new ConflictError('a request with this Idempotency-Key is still in progress');
    }
    reply.code(200).header('ocss-replay', 'original');
    if (receipt.response_content_type) {
      reply.type(receipt.response_content_type);
    }
    reply.send(receipt.response_body ?? '');
    return true;
  }

  /** Keeps a success as the receipt; anything else frees the key for a retry. */
  async function settle(reply: FastifyReply, id: ReceiptId, payload: unknown) {
    const body = payloadText(payload);
    // Only successes are kept: a 4xx changed nothing, and replaying it as a 200 (the
    // contract's replay status) would mislead; 5xx are never stored.
    if (reply.statusCode >= 300 || body === undefined) {
      await releaseReceipt(db, id);
      return;
    }
    const contentType = reply.getHeader('content-type');
    await completeReceipt(db, id, {
      status: reply.statusCode,
      body,
      contentType: typeof contentType === 'string' ? contentType : null,
    });
  }

  // Callback-style hooks: most requests carry no key and must not pay for a promise.
  app.addHook('preHandler', (request, reply, done) => {
    const header = idempotencyKeyOf(request);
    const route = request.routeOptions.url;
    if (header === undefined || !route || !isApiPath(route) || !isMutatingMethod(request.method)) {
      done();
      return;
    }
    claimOrReplay(request, reply, header).then((replayed) => {
      if (!replayed) {
        done();
      }
    }, done);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const id = request.idempotentReceipt;
    if (!id) {
      done(null, payload);
      return;
    }
    request.idempotentReceipt = null;
    settle(reply, id, payload).then(() => done(null, payload), done);
  });

  const sweep = setInterval(() => {
    deleteExpiredReceipts(db, clock.now()).catch((error) =>
      app.log.warn({ err: error }, 'idempotency receipt cleanup failed'),
    );
  }, CLEANUP_EVERY_MS);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
}
