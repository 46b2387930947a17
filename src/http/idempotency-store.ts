// SQL of the Idempotency-Key receipts. No rules here: the plugin decides what a row means.
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { IdempotencyKeyTable } from '../db/schema.js';

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
}

export type Receipt = Pick<
  IdempotencyKeyTable,
  'fingerprint' | 'state' | 'response_status' | 'response_body' | 'response_content_type'
>;

function idColumns(id: ReceiptId) {
  return { caller: id.caller, method: id.method, path: id.path, key: id.key };
}

/**
 * Takes the key for this request: a new key, an expired receipt, or an in-flight claim whose
 * lease ran out (its process died) is taken over. Returns true when this request owns it.
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
          created_at: (eb) => eb.ref('excluded.created_at'),
          locked_until: (eb) => eb.ref('excluded.locked_until'),
          expires_at: (eb) => eb.ref('excluded.expires_at'),
        })
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.expires_at', '<=', claim.now),
            eb.and([
              eb('idempotency_keys.state', '=', 'in_flight'),
              eb('idempotency_keys.locked_until', '<=', claim.now),
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
    .select(['fingerprint', 'state', 'response_status', 'response_body', 'response_content_type'])
    .where((eb) => eb.and(idColumns(id)))
    .executeTakeFirst();
}

export async function completeReceipt(
  db: Db,
  id: ReceiptId,
  response: { status: number; body: string; contentType: string | null },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      response_status: response.status,
      response_body: response.body,
      response_content_type: response.contentType,
    })
    .where((eb) => eb.and(idColumns(id)))
    .execute();
}

export async function releaseReceipt(db: Db, id: ReceiptId): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.and(idColumns(id)))
    .where('state', '=', 'in_flight')
    .execute();
}

export async function deleteExpiredReceipts(db: Db, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
