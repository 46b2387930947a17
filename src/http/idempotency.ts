// Idempotency-Key on every POST/PUT/PATCH/DELETE under /api/v1 (CONTRACT.md §5). Receipts
// live in the database, so a replay is answered the same after a restart and on any instance.
//
// A key runs its write at most once (docs/decisions.md "A write and its answer commit
// together"): the claim is committed first (so a concurrent attempt is told 409), then the
// request runs in a request transaction (db/request-transaction.ts) and its answer is
// recorded in that same transaction, only while this attempt's token still holds the claim.
// A process that dies before the commit leaves no write and a claim that the next attempt
// takes over as soon as the dead instance stops beating (or its lease ends).
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import { openRequestTransaction, type RequestTransaction } from '../db/request-transaction.js';
import { BadRequestError, ConflictError } from './errors.js';
import {
  claimReceipt,
  completeReceipt,
  deleteExpiredReceipts,
  findReceipt,
  type Receipt,
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
    idempotentReceipt: HeldClaim | null;
  }
}

/** A claim this request holds, and the transaction its writes and answer commit in. */
interface HeldClaim {
  id: ReceiptId;
  token: string;
  transaction: RequestTransaction | undefined;
}

/** Who runs this process, for telling others whether a claim's attempt is still alive. */
export interface ClaimingInstance {
  id: string;
  staleAfterSeconds: number;
}

/** Another attempt took the claim over while this one ran: this one's writes roll back. */
class ClaimTakenOver extends Error {}

export const RECEIPT_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight claim older than this belongs to a request whose process died. */
export const IN_FLIGHT_LEASE_MS = 60 * 1000;
const CLEANUP_EVERY_MS = 10 * 60 * 1000;
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/**
 * Response headers a replay repeats: those naming what the write made, which a client that
 * lost the first answer cannot learn otherwise (an erasure's id comes only in a header).
 */
const REPLAYED_HEADERS = ['haven-erasure-id'] as const;

function replayedHeadersOf(reply: FastifyReply): Record<string, string> | null {
  const kept: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (typeof value === 'string') {
      kept[name] = value;
    }
  }
  return Object.keys(kept).length > 0 ? kept : null;
}

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

export function installIdempotency(
  app: FastifyInstance,
  db: Db,
  clock: Clock,
  instance: ClaimingInstance,
): void {
  app.decorateRequest('callerKey', null);
  app.decorateRequest('idempotentReceipt', null);

  /** Answers from a completed receipt, or refuses (409). */
  function answerFromReceipt(
    reply: FastifyReply,
    receipt: Receipt | undefined,
    fingerprint: string,
  ) {
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
    for (const [name, value] of Object.entries(receipt.response_headers ?? {})) {
      reply.header(name, value);
    }
    if (receipt.response_content_type) {
      reply.type(receipt.response_content_type);
    }
    return receipt.response_body ?? '';
  }

  /** Claims the key (resolves with the claim), or answers from the receipt (resolves null). */
  async function claimOrReplay(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string | string[],
  ): Promise<HeldClaim | null> {
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
    const token = randomUUID();
    const claimed = await claimReceipt(db, {
      ...id,
      fingerprint,
      now,
      lockedUntil: new Date(now.getTime() + IN_FLIGHT_LEASE_MS),
      expiresAt: new Date(now.getTime() + RECEIPT_TTL_MS),
      token,
      instance: instance.id,
      staleAfterSeconds: instance.staleAfterSeconds,
    });
    if (claimed) {
      return { id, token, transaction: openRequestTransaction(db) };
    }
    reply.send(answerFromReceipt(reply, await findReceipt(db, id), fingerprint));
    return null;
  }

  /**
   * Ends the request's transaction with its answer: a success is recorded as the receipt and
   * committed with the writes; an error answer rolls the writes back (it changed nothing) and
   * frees the key for a retry.
   */
  async function settle(
    request: FastifyRequest,
    reply: FastifyReply,
    claim: HeldClaim,
    payload: unknown,
  ): Promise<unknown> {
    const { id, token, transaction } = claim;
    const body = payloadText(payload);
    if (reply.statusCode >= 400) {
      await transaction?.abort();
      await releaseReceipt(db, id, token);
      return payload;
    }
    // Only successes are kept: replaying a 3xx as the contract's 200 would mislead, and a
    // stream cannot be kept; their writes stand, the key is freed.
    const kept = reply.statusCode < 300 && body !== undefined;
    const contentType = reply.getHeader('content-type');
    const close = async () => {
      if (!kept) {
        await releaseReceipt(db, id, token);
        return;
      }
      const recorded = await completeReceipt(db, id, token, {
        status: reply.statusCode,
        body,
        contentType: typeof contentType === 'string' ? contentType : null,
        headers: replayedHeadersOf(reply),
      });
      if (!recorded) {
        throw new ClaimTakenOver();
      }
    };
    try {
      await (transaction ? transaction.end(close) : close());
      return payload;
    } catch (error) {
      if (!(error instanceof ClaimTakenOver)) {
        await releaseReceipt(db, id, token).catch(() => {});
        throw error;
      }
      // This attempt's writes were rolled back; the attempt that took over answers for the key.
      return answerFromReceipt(reply, await findReceipt(db, id), fingerprintOf(request));
    }
  }

  // Callback-style hooks: most requests carry no key and must not pay for a promise.
  app.addHook('preHandler', (request, reply, done) => {
    const header = idempotencyKeyOf(request);
    const route = request.routeOptions.url;
    if (header === undefined || !route || !isApiPath(route) || !isMutatingMethod(request.method)) {
      done();
      return;
    }
    claimOrReplay(request, reply, header).then((claim) => {
      if (!claim) {
        return;
      }
      request.idempotentReceipt = claim;
      // The handler, and every statement it causes, runs as part of the request transaction.
      if (claim.transaction) {
        claim.transaction.within(() => done());
      } else {
        done();
      }
    }, done);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const claim = request.idempotentReceipt;
    if (!claim) {
      done(null, payload);
      return;
    }
    request.idempotentReceipt = null;
    settle(request, reply, claim, payload).then(
      (answer) => done(null, answer),
      (error) => done(error),
    );
  });

  // A request that never reached onSend (its connection gone before an answer) must not keep
  // its transaction, or the embedded database's only connection, open.
  app.addHook('onResponse', (request, _reply, done) => {
    const claim = request.idempotentReceipt;
    if (!claim) {
      done();
      return;
    }
    request.idempotentReceipt = null;
    Promise.resolve(claim.transaction?.abort())
      .then(() => releaseReceipt(db, claim.id, claim.token))
      .then(
        () => done(),
        () => done(),
      );
  });

  const sweep = setInterval(() => {
    deleteExpiredReceipts(db, clock.now()).catch((error) =>
      app.log.warn({ err: error }, 'idempotency receipt cleanup failed'),
    );
  }, CLEANUP_EVERY_MS);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
}
