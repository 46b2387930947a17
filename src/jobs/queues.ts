// Every queue Haven uses, with its own retry and expiry settings. Queues are created by the
// migration step (pg-boss 10 needs a queue before it accepts jobs for it).
import type PgBoss from 'pg-boss';

export const QUEUES = {
  /** One job per enforcement job row: fan a policy out to the family's platforms. */
  enforcement: 'enforcement',
  /** One job per webhook delivery attempt. */
  webhookDelivery: 'webhook-delivery',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * expireInSeconds bounds how long a job may stay `active`: a worker killed mid-job (kill -9)
 * leaves its job active, and pg-boss's maintenance hands it out again once it expires. The
 * bound sits well above the slowest legitimate run (a webhook's 15 s timeout).
 */
export const QUEUE_SETTINGS: Record<QueueName, Omit<PgBoss.Queue, 'name'>> = {
  enforcement: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 120 },
  // A failed delivery is rescheduled by Haven on the Standard Webhooks schedule, as a new
  // attempt; pg-boss retries only a worker that crashed or threw before recording one.
  'webhook-delivery': { retryLimit: 3, retryDelay: 5, retryBackoff: true, expireInSeconds: 120 },
};

/**
 * Jobs one process runs at once per queue. Deliveries wait on other people's servers (up to
 * 15 s each), so they get more; enforcement runs are short and mostly database work.
 */
export const QUEUE_CONCURRENCY: Record<QueueName, number> = {
  enforcement: 2,
  'webhook-delivery': 8,
};
