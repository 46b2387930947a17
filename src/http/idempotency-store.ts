// SQL of the Idempotency-Key receipts. No rules here: the plugin decides what a row means.
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { IdempotencyKeyTable } from '../db/schema.js';
import { hasStoppedBeatingSql } from '../jobs/liveness.js';

export interface ReceiptId {
  caller: string;
  method: string;
  path: string;
  key: string;
}

export interface Claim extends ReceiptId {
  fingerprint: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
  /** This attempt's own token: its answer is recorded only while the token holds the claim. */
  token: string;
  /** The instance running the attempt (its heartbeat tells others it is alive). */
  instance: string;
  /** A claimer whose last beat is older than this is dead (see jobs/liveness.ts). */
  staleAfterSeconds: number;
}

export type Receipt = Pick<
  IdempotencyKeyTable,
  | 'fingerprint'
  | 'state'
  | 'response_status'
  | 'response_body'
  | 'response_content_type'
  | 'response_headers'
>;

function idColumns(id: ReceiptId) {
  return { caller: id.caller, method: id.method, path: id.path, key: id.key };
}

/**
 * Takes the key for this request: a new key, an expired receipt, or an in-flight claim whose
 * lease ran out or whose instance stopped beating (its process died) is taken over. Returns
 * true when this request owns it. A claimer with no heartbeat at all is taken for alive:
 * only the lease frees its claim.
 */
export async function claimReceipt(db: Db, claim: Claim): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      caller: claim.caller,
      method: claim.method,
      path: claim.path,
      key: claim.key,
      fingerprint: claim.fingerprint,
      state: 'in_flight',
      created_at: claim.now,
      locked_until: claim.lockedUntil,
      expires_at: claim.expiresAt,
      claim_token: claim.token,
      claimed_by: claim.instance,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['caller', 'method', 'path', 'key'])
        .doUpdateSet({
          fingerprint: (eb) => eb.ref('excluded.fingerprint'),
          state: 'in_flight',
          response_status: null,
          response_body: null,
          response_content_type: null,
          response_headers: null,
          created_at: (eb) => eb.ref('excluded.created_at'),
          locked_until: (eb) => eb.ref('excluded.locked_until'),
          expires_at: (eb) => eb.ref('excluded.expires_at'),
          claim_token: (eb) => eb.ref('excluded.claim_token'),
          claimed_by: (eb) => eb.ref('excluded.claimed_by'),
        })
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.expires_at', '<=', claim.now),
            eb.and([
              eb('idempotency_keys.state', '=', 'in_flight'),
              eb.or([
                eb('idempotency_keys.locked_until', '<=', claim.now),
                hasStoppedBeatingSql(
                  sql.ref('idempotency_keys.claimed_by'),
                  claim.staleAfterSeconds,
                ),
              ]),
            ]),
          ]),
        ),
    )
    .returning(sql<boolean>`true`.as('claimed'))
    .executeTakeFirst();
  return result !== undefined;
}

export async function findReceipt(db: Db, id: ReceiptId): Promise<Receipt | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select([
      'fingerprint',
      'state',
      'response_status',
      'response_body',
      'response_content_type',
      'response_headers',
    ])
    .where((eb) => eb.and(idColumns(id)))
    .executeTakeFirst();
}

/**
 * Records the answer, if this attempt still holds the claim (run inside the transaction of
 * the attempt's writes). False when another attempt took the claim over: the caller must
 * roll its writes back.
 */
export async function completeReceipt(
  db: Db,
  id: ReceiptId,
  token: string,
  response: {
    status: number;
    body: string;
    contentType: string | null;
    headers: Record<string, string> | null;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      response_status: response.status,
      response_body: response.body,
      response_content_type: response.contentType,
      response_headers: response.headers
        ? (JSON.stringify(response.headers) as unknown as Record<string, string>)
        : null,
    })
    .where((eb) => eb.and(idColumns(id)))
    .where('state', '=', 'in_flight')
    .where('claim_token', '=', token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Frees the key for a retry, if this attempt still holds it. */
export async function releaseReceipt(db: Db, id: ReceiptId, token: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.and(idColumns(id)))
    .where('state', '=', 'in_flight')
    .where('claim_token', '=', token)
    .execute();
}

export async function deleteExpiredReceipts(db: Db, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
