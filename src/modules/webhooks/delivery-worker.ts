// The webhook-delivery job: one attempt of one message. It signs with the injected clock,
// POSTs once, records the outcome on the attempt's row and, after a failure, queues the next
// attempt on the Standard Webhooks schedule (CONTRACT.md §8). An endpoint that has been failing
// for 5 days is disabled instead.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import type { JobHandler, JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { systemActor } from '../audit/actor.js';
import type { CredentialCipher } from '../connections/credential-cipher.js';
import type { DeliveryJob, DeliveryQueue } from './delivery-queue.js';
import { type PostOutcome, postSigned, type TargetRules } from './delivery-request.js';
import { observedAttempt } from './delivery-telemetry.js';
import { secretBinding, signMessage } from './signing.js';
import {
  type DeliveryRow,
  findDelivery,
  findSealedSecret,
  findWebhook,
  finishDelivery,
  markFailing,
  markHealthy,
  updateWebhook,
  type WebhookRow,
} from './store.js';

/** Seconds before attempts 2..8. */
export const RETRY_DELAYS_SECONDS: readonly number[] = [
  5,
  5 * 60,
  30 * 60,
  2 * 3600,
  5 * 3600,
  10 * 3600,
  10 * 3600,
];
export const DELIVERY_TIMEOUT_MS = 15_000;
const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
const DISABLED_REASON = 'endpoint failing for 5 days';

function failureOf(outcome: PostOutcome): { code: number | null; error: string } | undefined {
  if (outcome.kind === 'failed') {
    return { code: null, error: outcome.error };
  }
  const { status } = outcome;
  if (status >= 200 && status < 300) {
    return undefined;
  }
  const error =
    status >= 300 && status < 400
      ? `redirect not followed (HTTP ${status})`
      : `endpoint answered HTTP ${status}`;
  return { code: status, error };
}

export function createDeliveryWorker(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  writes: ChangeRunner;
  queue: Pick<DeliveryQueue, 'queueAttempt'>;
  jobs: Pick<JobQueue, 'wake'>;
  cipher: CredentialCipher;
  target: TargetRules;
  retryDelaysSeconds: readonly number[];
  telemetry?: Telemetry;
}): JobHandler<DeliveryJob> {
  const { db, clock } = deps;

  async function secretOf(webhookId: string): Promise<string> {
    const sealed = await findSealedSecret(db, webhookId);
    if (!sealed) {
      throw new Error('signing secret unavailable: the webhook has no sealed secret');
    }
    return deps.cipher.open(
      { sealed: sealed.secret, keyId: sealed.secret_key_id },
      secretBinding(webhookId),
    ) as string;
  }

  /** Writes the outcome; after a failure, the next attempt or the endpoint's disabling. */
  async function record(attempt: DeliveryRow, webhook: WebhookRow, outcome: PostOutcome) {
    const failure = failureOf(outcome);
    const at = clock.now();
    const retried = await deps.writes.run(async (change) => {
      const trx = change.trx;
      if (!failure) {
        const recorded = await finishDelivery(trx, attempt.id, {
          status: 'succeeded',
          response_code: outcome.kind === 'answered' ? outcome.status : null,
          error: null,
          attempted_at: at,
          next_retry_at: null,
        });
        if (recorded) {
          await markHealthy(trx, webhook.id);
        }
        return false;
      }
      const failingSince = await markFailing(trx, webhook.id, at);
      if (!failingSince) {
        return false;
      }
      const disable = at.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS;
      const delay = disable ? undefined : deps.retryDelaysSeconds[attempt.attempt - 1];
      const recorded = await finishDelivery(trx, attempt.id, {
        status: 'failed',
        response_code: failure.code,
        error: failure.error,
        attempted_at: at,
        next_retry_at: delay === undefined ? null : new Date(at.getTime() + delay * 1000),
      });
      if (disable) {
        await updateWebhook(trx, webhook.id, {
          active: false,
          disabled_reason: DISABLED_REASON,
          updated_at: at,
        });
        // Haven's own act on the family's setting: on its audit chain like a person's PATCH.
        change.audit({
          familyId: webhook.family_id,
          actor: systemActor('webhook delivery'),
          action: 'webhook.disabled',
          target: { type: 'webhook', id: webhook.id },
          changes: { active: false, disabled_reason: DISABLED_REASON },
        });
      }
      if (!recorded || delay === undefined) {
        return false;
      }
      await deps.queue.queueAttempt(trx, { ...attempt, attempt: attempt.attempt + 1 }, delay);
      return true;
    });
    if (retried) {
      deps.jobs.wake(QUEUES.webhookDelivery);
    }
    deps.log.info(
      {
        webhook_id: webhook.id,
        delivery_id: attempt.id,
        attempt: attempt.attempt,
        response_code: outcome.kind === 'answered' ? outcome.status : null,
        error: failure?.error,
      },
      failure ? 'webhook delivery failed' : 'webhook delivered',
    );
  }

  return async ({ deliveryId }) => {
    const attempt = await findDelivery(db, deliveryId);
    if (attempt?.status !== 'pending') {
      return;
    }
    const webhook = await findWebhook(db, attempt.webhook_id);
    if (!webhook) {
      return;
    }
    if (!webhook.active) {
      await finishDelivery(db, attempt.id, {
        status: 'failed',
        response_code: null,
        error: 'webhook is not active',
        attempted_at: null,
        next_retry_at: null,
      });
      return;
    }
    const outcome = await observedAttempt(
      deps.telemetry,
      { url: webhook.url, event: attempt.event, attempt: attempt.attempt },
      async (traceHeaders): Promise<PostOutcome> => {
        try {
          const headers = signMessage(
            await secretOf(webhook.id),
            attempt.message_id,
            clock.now(),
            attempt.payload,
          );
          return await postSigned(
            webhook.url,
            attempt.payload,
            { ...traceHeaders, ...headers },
            deps.target,
          );
        } catch (error) {
          return { kind: 'failed', error: (error as Error).message };
        }
      },
    );
    await record(attempt, webhook, outcome);
  };
}
