// The webhooks capability assembled: its service, the delivery worker on its queue, and the
// subscription that turns domain events into messages.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { AppEnv } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { CredentialCipher } from '../connections/credential-cipher.js';
import type { EventHub } from '../events/hub.js';
import type { FamiliesService } from '../families/service.js';
import { type HostResolver, systemResolver } from './address-guard.js';
import { createDeliveryQueue, type DeliveryJob } from './delivery-queue.js';
import {
  createDeliveryWorker,
  DELIVERY_TIMEOUT_MS,
  RETRY_DELAYS_SECONDS,
} from './delivery-worker.js';
import { webhookFanOut } from './fan-out.js';
import { createWebhooksService } from './service.js';

export interface WebhookTuning {
  /** Seconds before attempts 2..8 (default: the Standard Webhooks schedule). */
  retryDelaysSeconds?: readonly number[];
  /** How long an endpoint has to answer (default 15 s). */
  timeoutMs?: number;
  /** How host names resolve, at creation and at delivery (default: the system resolver). */
  resolve?: HostResolver;
}

export function createWebhooks(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  appEnv: AppEnv;
  jobs: Pick<JobQueue, 'send' | 'wake' | 'handle'>;
  events: Pick<EventHub, 'subscribe'>;
  families: Pick<
    FamiliesService,
    'requireFamily' | 'listFamilies' | 'checkThrough' | 'visibleRows'
  >;
  cipher: CredentialCipher;
  writes: ChangeRunner;
  /** Each attempt counted and, with tracing on, a CLIENT span sending its `traceparent`. */
  telemetry?: Telemetry;
  tuning?: WebhookTuning;
}) {
  const { db, clock, jobs, tuning = {} } = deps;
  const publicOnly = deps.appEnv === 'production';
  const resolve = tuning.resolve ?? systemResolver;
  const queue = createDeliveryQueue({ clock, jobs });
  jobs.handle<DeliveryJob>(
    QUEUES.webhookDelivery,
    createDeliveryWorker({
      db,
      clock,
      log: deps.log,
      writes: deps.writes,
      queue,
      jobs,
      cipher: deps.cipher,
      telemetry: deps.telemetry,
      target: { publicOnly, resolve, timeoutMs: tuning.timeoutMs ?? DELIVERY_TIMEOUT_MS },
      retryDelaysSeconds: tuning.retryDelaysSeconds ?? RETRY_DELAYS_SECONDS,
    }),
  );
  deps.events.subscribe('webhooks', webhookFanOut({ queue }));
  return createWebhooksService({
    db,
    clock,
    publicOnly,
    resolve,
    families: deps.families,
    cipher: deps.cipher,
    writes: deps.writes,
    queue,
  });
}
