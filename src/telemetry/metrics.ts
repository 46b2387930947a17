// The process's Prometheus metrics (CONTRACT.md §13), on a registry of its own (never
// prom-client's global one: a test process builds many apps, each with its own figures).
// Every metric Haven names is defined here, with the one function that records it, so a
// label can only ever be one of the values listed beside it: a route pattern, a queue, a
// platform, an outcome; never an id, a key or a personal value.
//
// A request is counted where it is answered: Fastify's hooks for routed requests
// (http/request-telemetry.ts), the fast-path registry for the ones answered ahead of the
// router (http/fast-path.ts), so both are counted alike. Their two metrics are plain tallies,
// turned into prom-client's form when scraped (request-series.ts says why).
import {
  Counter as CounterMetric,
  collectDefaultMetrics,
  Gauge,
  Histogram as HistogramMetric,
  Registry,
} from 'prom-client';
import { createRequestSeries } from './request-series.js';

/** What a metric's `outcome` label may say of a job run. */
export type JobOutcome = 'completed' | 'failed';
/** What a webhook delivery attempt came to. */
export type DeliveryOutcome = 'succeeded' | 'failed';
/** What a partner API call came to, by the adapter's reading of it (partner-http.ts). */
export type PartnerCallOutcome =
  | 'ok'
  | 'credentials'
  | 'not_found'
  | 'rejected'
  | 'unavailable'
  | 'timeout';

export interface PoolState {
  idle: number;
  busy: number;
  waiting: number;
}

/** The route label of a request no route matched (404s, malformed URLs). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The status of a request whose client went away before its answer (nginx's 499). */
export const CLIENT_CLOSED = 499;

/** Seconds: from a fast path's tens of microseconds to a slow partner-bound write. */
const REQUEST_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];
/** Partner calls wait on other people's servers: bounded at 10 s an attempt. */
const PARTNER_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface MetricsOptions {
  /**
   * Off only to measure what metrics cost (`npm run bench -- --metrics-cost`): every
   * recorder is then a no-op. A deployment always records.
   */
  enabled?: boolean;
}

let processMetrics: Registry | undefined;

/**
 * prom-client's process metrics (CPU, heap, GC, event-loop lag), collected once per process
 * and shown by every app in it: they describe the process, not an app, and each collection
 * keeps an event-loop delay monitor and a GC observer running for the life of the process,
 * which a test process building hundreds of apps would multiply.
 */
function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

export function createMetrics(options: MetricsOptions = {}) {
  const enabled = options.enabled ?? true;
  const registry = new Registry();
  const registers = [registry];

  const requests = createRequestSeries(
    registry,
    { requests: 'haven_http_requests_total', duration: 'haven_http_request_duration_seconds' },
    REQUEST_BUCKETS,
  );
  const jobs = new CounterMetric({
    name: 'haven_jobs_total',
    help: 'Background job runs, by queue and outcome (a failed run is retried on its schedule).',
    labelNames: ['queue', 'outcome'] as const,
    registers,
  });
  const webhookDeliveries = new CounterMetric({
    name: 'haven_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (succeeded: the endpoint answered 2xx).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const partnerCalls = new CounterMetric({
    name: 'haven_partner_calls_total',
    help: 'Calls to partner APIs (NextDNS, Control D), each attempt, by platform and outcome.',
    labelNames: ['platform', 'outcome'] as const,
    registers,
  });
  const partnerDuration = new HistogramMetric({
    name: 'haven_partner_call_duration_seconds',
    help: 'Time of one partner API attempt, by platform.',
    labelNames: ['platform'] as const,
    buckets: PARTNER_BUCKETS,
    registers,
  });
  const rateLimited = new CounterMetric({
    name: 'haven_rate_limited_total',
    help: 'Requests refused with 429 by a rate limit.',
    registers,
  });
  const ageChanges = new CounterMetric({
    name: 'haven_age_changes_total',
    help: 'Children whose age in force changed on a birthday (a child.age_changed or child.came_of_age), applied by this process.',
    registers,
  });

  // Gauges read when scraped, from whoever owns the figure (the pool, the job queue).
  let poolState: (() => PoolState) | undefined;
  new Gauge({
    name: 'haven_db_pool_connections',
    help: "The database pool's connections: idle, busy, and requests waiting for one.",
    labelNames: ['state'] as const,
    registers,
    collect() {
      if (!poolState) {
        return;
      }
      const state = poolState();
      this.set({ state: 'idle' }, state.idle);
      this.set({ state: 'busy' }, state.busy);
      this.set({ state: 'waiting' }, state.waiting);
    },
  });
  let waitingJobs: (() => Promise<Record<string, number>>) | undefined;
  new Gauge({
    name: 'haven_jobs_waiting',
    help: 'Jobs queued and not yet taken (due now or later, retries included), by queue.',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      if (!waitingJobs) {
        return;
      }
      this.reset();
      // A scrape while the database is away still answers, without this gauge.
      const counts = await waitingJobs().catch(() => ({}));
      for (const [queue, count] of Object.entries(counts)) {
        this.set({ queue }, count);
      }
    },
  });

  // What a scrape reads: the process's metrics and this app's, in one exposition.
  const exposed = Registry.merge([processRegistry(), registry]);

  return {
    enabled,
    registry: exposed,
    contentType: exposed.contentType,

    /**
     * One answered request. `route` is the pattern (UNMATCHED_ROUTE when none matched);
     * `status` is CLIENT_CLOSED when the client went away before its answer.
     */
    request(method: string, route: string, status: number, seconds: number): void {
      if (enabled) {
        requests.record(method, route, status, seconds);
      }
    },

    job(queue: string, outcome: JobOutcome): void {
      if (enabled) {
        jobs.inc({ queue, outcome });
      }
    },

    webhookDelivery(outcome: DeliveryOutcome): void {
      if (enabled) {
        webhookDeliveries.inc({ outcome });
      }
    },

    partnerCall(platform: string, outcome: PartnerCallOutcome, seconds: number): void {
      if (enabled) {
        partnerCalls.inc({ platform, outcome });
        partnerDuration.observe({ platform }, seconds);
      }
    },

    rateLimited(): void {
      if (enabled) {
        rateLimited.inc();
      }
    },

    ageChanged(count = 1): void {
      if (enabled && count > 0) {
        ageChanges.inc(count);
      }
    },

    /** Where the pool gauge reads its figures (the database handle, once it exists). */
    watchPool(read: () => PoolState): void {
      poolState = read;
    },

    /** Where the waiting-jobs gauge reads its figures (the job queue). */
    watchWaitingJobs(read: () => Promise<Record<string, number>>): void {
      waitingJobs = read;
    },

    /** The exposition text a scrape answers. */
    exposition(): Promise<string> {
      return exposed.metrics();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
