// What the job queue tells the process's telemetry (CONTRACT.md §13): a count of every run by
// queue and outcome, the jobs waiting per queue (read when scraped), and, with tracing on, a
// CONSUMER span per run in the trace of whoever queued the job.
//
// The trace crosses the database in the job's own data: `send` adds the W3C headers of the
// span active when the job is queued (a request's, or another job run's), and a run takes them
// off again before its handler sees the data. A job queued with no span active (a timer's)
// carries nothing, and its run is the root of a trace of its own.
import { context, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { TraceCarrier } from '../telemetry/tracing.js';
import { JOBS_SCHEMA } from './install.js';
import { QUEUES, type QueueName } from './queues.js';

/** The key of a job's data that carries its trace; never one a handler reads. */
const TRACE_KEY = 'trace_context';

/** `data` with the active trace added, or `data` itself when there is none (tracing off). */
export function withTraceContext(data: object, telemetry: Telemetry | undefined): object {
  if (!telemetry?.tracing.enabled) {
    return data;
  }
  const carrier = telemetry.tracing.carrier();
  return carrier.traceparent ? { ...data, [TRACE_KEY]: carrier } : data;
}

/** A job's data as its handler is given it, and the trace it was queued in (if any). */
function splitTraceContext(data: unknown): { data: unknown; carrier?: TraceCarrier } {
  if (typeof data !== 'object' || data === null || !(TRACE_KEY in data)) {
    return { data };
  }
  const { [TRACE_KEY]: carrier, ...rest } = data as Record<string, unknown>;
  return { data: rest, carrier: carrier as TraceCarrier };
}

/**
 * Runs one job: counted by outcome and, with tracing on, inside a span named `job <queue>`
 * (its parent the span that queued it). `run` is given the data without the trace.
 */
export async function runObserved(
  telemetry: Telemetry | undefined,
  queue: QueueName,
  job: { id: string; data: unknown; retryCount: number },
  run: (data: unknown) => Promise<void>,
): Promise<void> {
  const { data, carrier } = splitTraceContext(job.data);
  try {
    if (!telemetry?.tracing.enabled) {
      await run(data);
    } else {
      const { tracing } = telemetry;
      // From the root, so a job queued by a timer never joins whatever span is active in
      // the worker loop that took it.
      const parent = context.with(ROOT_CONTEXT, () =>
        carrier ? tracing.extract({ ...carrier }) : ROOT_CONTEXT,
      );
      await tracing.inSpan(
        `job ${queue}`,
        {
          kind: SpanKind.CONSUMER,
          parent,
          attributes: {
            'messaging.system': 'pg-boss',
            'messaging.operation.type': 'process',
            'messaging.destination.name': queue,
            'messaging.message.id': job.id,
            'haven.job.retry_count': job.retryCount,
          },
        },
        () => run(data),
      );
    }
  } catch (error) {
    telemetry?.metrics.job(queue, 'failed');
    throw error;
  }
  telemetry?.metrics.job(queue, 'completed');
}

/**
 * Jobs queued and not yet taken, per queue (every queue named, 0 when none): one statement,
 * counted from pg-boss's own partial index of jobs before `active` (job_i5, on each queue's
 * partition), so a scrape never reads the hours of finished jobs the table keeps.
 */
export async function countWaitingJobs(db: Kysely<Database>): Promise<Record<string, number>> {
  const { rows } = await sql<{ name: string; waiting: number }>`
    select name, count(*)::int as waiting from ${sql.table(`${JOBS_SCHEMA}.job`)}
    where state < 'active' group by name`.execute(db);
  const counts: Record<string, number> = Object.fromEntries(
    Object.values(QUEUES).map((queue) => [queue, 0]),
  );
  for (const row of rows) {
    if (row.name in counts) {
      counts[row.name] = Number(row.waiting);
    }
  }
  return counts;
}
