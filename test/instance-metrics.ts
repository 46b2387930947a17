// Several processes observed through their GET /metrics, for tests that run instances side by
// side: scrapes over HTTP, the requests an instance answered for a balancer, a watch that
// scrapes every instance while a test runs, and what the database says of the same work
// (jobs completed, webhook delivery attempts), to set the counters against.
import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';
import { MetricSnapshot, parseExposition } from './metric-samples.js';

/** Routes a test asks an instance directly, never through its balancer. */
const DIRECT_ROUTES = new Set(['/metrics', '/health', '/health/live', '/health/ready']);

/** One scrape of a process's GET /metrics (open: no METRICS_TOKEN in the sandbox). */
export async function scrapeProcess(url: string): Promise<MetricSnapshot> {
  const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(`${url}/metrics answered ${response.status}: ${text.slice(0, 200)}`);
  }
  return new MetricSnapshot(parseExposition(text));
}

/** The requests an instance counted, but those the test asked it directly (scrapes, probes). */
export function balancedRequests(snapshot: MetricSnapshot): number {
  return snapshot
    .find('haven_http_requests_total')
    .filter((sample) => !DIRECT_ROUTES.has(sample.labels.route ?? ''))
    .reduce((sum, sample) => sum + sample.value, 0);
}

export interface WatchedInstance {
  ok: number;
  failed: number;
  /** balancedRequests of each successful scrape, in order. */
  requests: number[];
  last?: MetricSnapshot;
  lastError?: string;
}

/** Scrapes every instance in turn, over and over, until stopped. */
export class MetricsWatch {
  readonly instances = new Map<string, WatchedInstance>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly urls: string[]) {
    for (const url of urls) {
      this.instances.set(url, { ok: 0, failed: 0, requests: [] });
    }
  }

  start(periodMs: number): void {
    this.running = (async () => {
      while (!this.stopped) {
        await Promise.all(this.urls.map((url) => this.scrapeOne(url)));
        await new Promise((resolve) => setTimeout(resolve, periodMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async scrapeOne(url: string): Promise<void> {
    const instance = this.instances.get(url) as WatchedInstance;
    try {
      const snapshot = await scrapeProcess(url);
      instance.ok++;
      instance.requests.push(balancedRequests(snapshot));
      instance.last = snapshot;
    } catch (error) {
      instance.failed++;
      instance.lastError = String((error as Error).cause ?? error);
    }
  }
}

/** Counts the database holds of one phase's work, to set against the counters' deltas. */
export interface WorkCounts {
  /** pg-boss jobs completed, by queue (finished jobs are kept, then archived: both counted). */
  completedJobs: Record<string, number>;
  /** Webhook delivery attempts made, by outcome (rows a request was sent for). */
  deliveries: { succeeded: number; failed: number };
}

export async function workCounts(db: Db, queues: string[]): Promise<WorkCounts> {
  const jobs = await sql<{ name: string; count: number }>`
    select name, count(*)::int as count from (
      select name from pgboss.job where state = 'completed' and name in (${sql.join(queues)})
      union all
      select name from pgboss.archive where state = 'completed' and name in (${sql.join(queues)})
    ) finished group by name`.execute(db);
  const deliveries = await sql<{ status: string; count: number }>`
    select status, count(*)::int as count from webhook_deliveries
    where attempted_at is not null group by status`.execute(db);
  const completedJobs = Object.fromEntries(queues.map((queue) => [queue, 0]));
  for (const row of jobs.rows) {
    completedJobs[row.name] = row.count;
  }
  const of = (status: string) => deliveries.rows.find((row) => row.status === status)?.count ?? 0;
  return { completedJobs, deliveries: { succeeded: of('succeeded'), failed: of('failed') } };
}

/**
 * Jobs of `queues` running, or due within `horizonSeconds`: none, and no work of those queues
 * can be counted by one side (a worker's counter) before the other (the database).
 */
export async function jobsPending(
  db: Db,
  queues: string[],
  horizonSeconds: number,
): Promise<number> {
  const result = await sql<{ count: number }>`
    select count(*)::int as count from pgboss.job
    where name in (${sql.join(queues)})
      and (state = 'active'
        or (state in ('created', 'retry')
          and start_after < now() + make_interval(secs => ${horizonSeconds})))`.execute(db);
  return result.rows[0]?.count ?? 0;
}

/** The counters of the same work, summed over the given scrapes (the live workers'). */
export function countedWork(snapshots: MetricSnapshot[], queues: string[]): WorkCounts {
  const sum = (name: string, labels: Record<string, string>) =>
    snapshots.reduce((total, snapshot) => total + snapshot.value(name, labels), 0);
  return {
    completedJobs: Object.fromEntries(
      queues.map((queue) => [queue, sum('haven_jobs_total', { queue, outcome: 'completed' })]),
    ),
    deliveries: {
      succeeded: sum('haven_webhook_deliveries_total', { outcome: 'succeeded' }),
      failed: sum('haven_webhook_deliveries_total', { outcome: 'failed' }),
    },
  };
}

/** `after` − `before`, field by field. */
export function workDelta(before: WorkCounts, after: WorkCounts): WorkCounts {
  return {
    completedJobs: Object.fromEntries(
      Object.entries(after.completedJobs).map(([queue, count]) => [
        queue,
        count - (before.completedJobs[queue] ?? 0),
      ]),
    ),
    deliveries: {
      succeeded: after.deliveries.succeeded - before.deliveries.succeeded,
      failed: after.deliveries.failed - before.deliveries.failed,
    },
  };
}
