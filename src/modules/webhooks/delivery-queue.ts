// Queues delivery attempts: an attempt row and its pg-boss job are written in one
// transaction, so a job never points at a missing row and a row never waits for a job that was
// not stored. Workers are woken only after the commit, when the job is visible to them.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Clock } from '../../clock.js';
import { afterCommit } from '../../db/request-transaction.js';
import type { Database } from '../../db/schema.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import { newMessageId } from './signing.js';
import {
  type DeliveryRow,
  insertDelivery,
  lastAttemptOf,
  supersedePending,
  type WebhookRow,
} from './store.js';

export interface DeliveryJob {
  deliveryId: string;
}

/** The body every attempt of a message sends, serialised once (CONTRACT.md §8). */
export function messageBody(
  type: string,
  occurredAt: Date,
  familyId: string,
  data: Record<string, unknown>,
): string {
  return JSON.stringify({ type, timestamp: occurredAt.toISOString(), family_id: familyId, data });
}

export function createDeliveryQueue(deps: { clock: Clock; jobs: Pick<JobQueue, 'send' | 'wake'> }) {
  const { clock, jobs } = deps;

  /** Writes one pending attempt and its job inside the caller's transaction. */
  async function queueAttempt(
    trx: Transaction<Database>,
    attempt: Pick<DeliveryRow, 'webhook_id' | 'message_id' | 'event' | 'payload' | 'attempt'>,
    startAfterSeconds = 0,
  ): Promise<DeliveryRow> {
    const row: DeliveryRow = {
      id: randomUUID(),
      webhook_id: attempt.webhook_id,
      message_id: attempt.message_id,
      event: attempt.event,
      payload: attempt.payload,
      attempt: attempt.attempt,
      status: 'pending',
      response_code: null,
      error: null,
      next_retry_at: null,
      created_at: clock.now(),
      attempted_at: null,
    };
    await insertDelivery(trx, row);
    // Never without `trx` here: on PGlite the transaction holds the one connection.
    await jobs.send(QUEUES.webhookDelivery, { deliveryId: row.id } satisfies DeliveryJob, {
      trx,
      startAfterSeconds,
    });
    return row;
  }

  /**
   * A new message to each webhook, attempt 1 of each, in the caller's transaction (the
   * change the message tells of). Workers hear of the jobs when it commits (the queue's
   * notification trigger).
   */
  async function queueMessagesIn(
    trx: Transaction<Database>,
    webhooks: readonly Pick<WebhookRow, 'id'>[],
    event: string,
    body: string,
  ): Promise<DeliveryRow[]> {
    const queued: DeliveryRow[] = [];
    for (const webhook of webhooks) {
      queued.push(
        await queueAttempt(trx, {
          webhook_id: webhook.id,
          message_id: newMessageId(),
          event,
          payload: body,
          attempt: 1,
        }),
      );
    }
    return queued;
  }

  return {
    queueAttempt,

    queueMessagesIn,

    /**
     * Another attempt of a message now (a caller's retry), in the caller's transaction: same
     * message id, same bytes. An attempt still waiting for its turn is closed, so one message
     * has one live attempt.
     */
    async retryMessageIn(trx: Transaction<Database>, of: DeliveryRow): Promise<DeliveryRow> {
      await supersedePending(trx, of.webhook_id, of.message_id, 'superseded by a manual retry');
      return queueAttempt(trx, {
        webhook_id: of.webhook_id,
        message_id: of.message_id,
        event: of.event,
        payload: of.payload,
        attempt: (await lastAttemptOf(trx, of.webhook_id, of.message_id)) + 1,
      });
    },

    /** Wakes the delivery workers once the caller's change is committed (a job is visible). */
    wakeAfterCommit(): void {
      afterCommit(() => jobs.wake(QUEUES.webhookDelivery));
    },
  };
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;
