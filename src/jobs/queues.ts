// Every queue Haven uses, with its own retry and expiry settings. Queues are created by the
// migration step (pg-boss 10 needs a queue before it accepts jobs for it).
import type PgBoss from 'pg-boss';

export const QUEUES = {
  /** One job per enforcement job row: fan a policy out to the family's platforms. */
  enforcement: 'enforcement',
  /** One job per webhook delivery attempt. */
  webhookDelivery: 'webhook-delivery',
  /** One job per test clock advance: apply what fell due for the clock's families. */
  ageChanges: 'age-changes',
  /**
   * One job per erasure with something to release (its data: the erasure id only; what the
   * release needs is sealed in erasure_release_secrets), and one deadline job 7 days later.
   */
  erasureReleases: 'erasure-releases',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * A job held by a killed process is handed back by the reaper (reaper.ts) within ~25 s of its
 * last heartbeat, through pg-boss's `fail`: its retry then waits retryDelay × 2^retryCount ×
 * (1..2) seconds (retryBackoff). The pick-up stays within a minute of the death while that
 * wait is under ~35 s.
 *
 * expireInSeconds is now only a backstop for a live but hung handler (pg-boss also gives up
 * waiting on the handler after it): a live job may take as long as its partners do, and a
 * dead one no longer waits for it. Settings are copied onto each job when it is queued;
 * install.ts brings an existing database's queues to these values.
 */
export const QUEUE_SETTINGS: Record<QueueName, Omit<PgBoss.Queue, 'name'>> = {
  // A run throws only when something other than a partner failed (a partner's refusal or
  // outage is a result of the job): the database away, mostly. Backoff from 2 s keeps the
  // first four runs within a minute of a death (25 s to be handed back + at most 4, 8, 16, 32
  // s); seven retries keep about as long a window for an outage (4-8 minutes) as before.
  enforcement: { retryLimit: 7, retryDelay: 2, retryBackoff: true, expireInSeconds: 15 * 60 },
  // A failed delivery is rescheduled by Haven on the Standard Webhooks schedule, as a new
  // attempt; pg-boss retries only a worker that crashed or threw before recording one, so its
  // delay is short: each of the 3 retries is taken up within 45 s of a death (2-4, 4-8, 8-16 s).
  // A run is database work only; one cut off by a crash is handed back and resumes with the
  // children still due (each applied child committed on its own).
  'age-changes': { retryLimit: 7, retryDelay: 2, retryBackoff: true, expireInSeconds: 15 * 60 },
  'webhook-delivery': {
    retryLimit: 3,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 15 * 60,
  },
  // Like enforcement: a run throws only when our side failed (a partner's refusal is a
  // status); a release re-run from the sealed record is harmless (what is gone stays gone).
  'erasure-releases': {
    retryLimit: 7,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 15 * 60,
  },
};

/**
 * Jobs one process runs at once per queue. Deliveries wait on other people's servers (up to
 * 15 s each), so they get more; enforcement runs are short and mostly database work.
 */
export const QUEUE_CONCURRENCY: Record<QueueName, number> = {
  enforcement: 2,
  'age-changes': 1,
  'webhook-delivery': 8,
  'erasure-releases': 1,
};
