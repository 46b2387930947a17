// Webhook deliveries and the job runs behind them, as GET /metrics counts them and as traces
// show them (CONTRACT.md §13): one count per attempt and per run, a run that throws counted
// failed, the jobs waiting per queue, the pool's connections; with tracing on, a delivery's
// job span in the trace of the request whose change caused the message and its POST a CLIENT
// span whose `traceparent` the receiver gets, and a delivery the real clock's age run caused
// the root of a trace of its own; with tracing off, no `traceparent` at all.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { newSession, type Session } from '../../../test/identity.js';
import { injectFailure } from '../../../test/injected-failure.js';
import { scrape } from '../../../test/metric-samples.js';
import {
  OtlpReceiver,
  type ReceivedSpan,
  SPAN_KIND,
  tracingEnv,
} from '../../../test/otlp-receiver.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { QUEUES } from '../../jobs/queues.js';

/** No waiting between attempts, and idle workers that look often. */
const FAST = { jobPollingIntervalSeconds: 0.5, webhookRetryDelaysSeconds: [0, 0, 0, 0, 0, 0, 0] };

interface Fixture {
  t: TestApp;
  who: Session;
  familyId: string;
}

async function fixture(t: TestApp): Promise<Fixture> {
  const who = await newSession(t.app);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/families',
    headers: who.auth,
    payload: { name: 'Observed deliveries' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { t, who, familyId: res.json().id };
}

async function register(f: Fixture, url: string, events: string[]): Promise<string> {
  const res = await f.t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: f.who.auth,
    payload: { family_id: f.familyId, url, events },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function sendTest(f: Fixture, webhookId: string, headers: Record<string, string> = {}) {
  const res = await f.t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${webhookId}/test`,
    headers: { ...f.who.auth, ...headers },
  });
  expect(res.statusCode, res.body).toBe(202);
}

/** Until the webhook has `count` attempts, none pending (read from the table: no rate limit). */
async function settled(f: Fixture, webhookId: string, count: number): Promise<void> {
  await eventually(async () => {
    const rows = await f.t.database.handle.db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('webhook_id', '=', webhookId)
      .execute();
    return rows.length === count && rows.every((row) => row.status !== 'pending');
  }, `${count} settled deliveries`);
}

const delivery = (outcome: string) => ['haven_webhook_deliveries_total', { outcome }] as const;
const deliveryJobs = (outcome: string) =>
  ['haven_jobs_total', { queue: QUEUES.webhookDelivery, outcome }] as const;

describe('webhook deliveries and job runs, counted', () => {
  const receiver = new WebhookReceiver();
  let f: Fixture;

  beforeAll(async () => {
    await receiver.start();
    // Real time: receivers refuse signatures 5 minutes away from now.
    f = await fixture(
      await buildTestApp({ clock: new TestClock(new Date()), tuning: { ...FAST } }),
    );
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 204 });
  });
  afterAll(async () => {
    await f.t.close();
    await receiver.stop();
  });

  it('counts each attempt by outcome and each run as completed: a 500, then its retry answered 204', async () => {
    const webhook = await register(f, receiver.url, ['test']);
    receiver.answer = (_request, index) => ({ status: index === 0 ? 500 : 204 });
    const before = await scrape(f.t.app);
    await sendTest(f, webhook);
    await settled(f, webhook, 2);
    // The second run's count is recorded when its handler returns, just after its row.
    await eventually(
      async () =>
        (await scrape(f.t.app)).value(...deliveryJobs('completed')) -
          before.value(...deliveryJobs('completed')) ===
        2,
      'both runs counted',
    );
    const after = await scrape(f.t.app);
    expect(after.value(...delivery('failed')) - before.value(...delivery('failed'))).toBe(1);
    expect(after.value(...delivery('succeeded')) - before.value(...delivery('succeeded'))).toBe(1);
    expect(after.value(...deliveryJobs('failed')) - before.value(...deliveryJobs('failed'))).toBe(
      0,
    );
    expect(receiver.received).toHaveLength(2);
    // Tracing is off: nothing names a trace to the receiver.
    for (const request of receiver.received) {
      expect(request.headers.traceparent).toBeUndefined();
    }
  });

  it('counts a run that throws as failed, and its retry (pg-boss hands the job out again) as completed', async () => {
    const webhook = await register(f, receiver.url, ['test']);
    // The attempt's outcome cannot be written: the run throws after its POST.
    const undo = await injectFailure(f.t.database.handle.db, {
      name: 'fail_recording_delivery',
      on: 'update',
      table: 'webhook_deliveries',
      when: `new.webhook_id = '${webhook}'`,
    });
    const before = await scrape(f.t.app);
    try {
      await sendTest(f, webhook);
      await eventually(
        async () =>
          (await scrape(f.t.app)).value(...deliveryJobs('failed')) -
            before.value(...deliveryJobs('failed')) ===
          1,
        'the failed run counted',
      );
    } finally {
      // Before pg-boss's retry (2 s at the soonest): the retry then records its attempt.
      await undo();
    }
    await settled(f, webhook, 1);
    await eventually(
      async () =>
        (await scrape(f.t.app)).value(...deliveryJobs('completed')) -
          before.value(...deliveryJobs('completed')) ===
        1,
      'the retried run counted',
    );
    const after = await scrape(f.t.app);
    expect(after.value(...deliveryJobs('failed')) - before.value(...deliveryJobs('failed'))).toBe(
      1,
    );
    // Each run POSTed once: two attempts, both answered 204.
    expect(receiver.received).toHaveLength(2);
    expect(after.value(...delivery('succeeded')) - before.value(...delivery('succeeded'))).toBe(2);
    expect(after.value(...delivery('failed')) - before.value(...delivery('failed'))).toBe(0);
  }, 30_000);

  it("reports the database pool's connections, idle and busy within the pool's size", async () => {
    const size = f.t.database.handle.backend === 'postgres' ? 10 : 1;
    const snapshot = await scrape(f.t.app);
    const state = (name: string) => snapshot.find('haven_db_pool_connections', { state: name });
    for (const name of ['idle', 'busy', 'waiting']) {
      expect(state(name), name).toHaveLength(1);
      expect(Number.isInteger(state(name)[0]?.value), name).toBe(true);
      expect(state(name)[0]?.value, name).toBeGreaterThanOrEqual(0);
    }
    const open =
      snapshot.value('haven_db_pool_connections', { state: 'idle' }) +
      snapshot.value('haven_db_pool_connections', { state: 'busy' });
    if (size === 1) {
      // PGlite is one connection, idle or busy.
      expect(open).toBe(1);
      return;
    }
    expect(open).toBeLessThanOrEqual(size);
    // A transaction held open keeps one connection busy while the scrape reads the pool.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begun: () => void = () => {};
    const holding = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const transaction = f.t.database.handle.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      begun();
      await held;
    });
    await holding;
    try {
      const during = await scrape(f.t.app);
      expect(during.value('haven_db_pool_connections', { state: 'busy' })).toBeGreaterThanOrEqual(
        1,
      );
    } finally {
      release();
      await transaction;
    }
  });
});

describe('jobs waiting, with workers elsewhere (WORKERS=off)', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture(await buildTestApp({ env: { WORKERS: 'off' } }));
  });
  afterAll(() => f.t.close());

  it('counts a queued job nobody took, under its queue; every queue reports, 0 when empty', async () => {
    const webhook = await register(f, 'http://127.0.0.1:9/hooks', ['test']);
    const waiting = async () => {
      const snapshot = await scrape(f.t.app);
      return Object.fromEntries(
        Object.values(QUEUES).map((queue) => {
          const samples = snapshot.find('haven_jobs_waiting', { queue });
          expect(samples, queue).toHaveLength(1);
          return [queue, samples[0]?.value];
        }),
      );
    };
    const before = await waiting();
    expect(before).toEqual({
      enforcement: 0,
      'webhook-delivery': 0,
      'age-changes': 0,
      'erasure-releases': 0,
    });
    await sendTest(f, webhook);
    await sendTest(f, webhook);
    expect(await waiting()).toEqual({ ...before, 'webhook-delivery': 2 });
  });
});

describe('webhook deliveries, traced', () => {
  const receiver = new WebhookReceiver();
  const otlp = new OtlpReceiver();
  let f: Fixture;

  beforeAll(async () => {
    await receiver.start();
    const endpoint = await otlp.start();
    f = await fixture(
      await buildTestApp({
        clock: new TestClock(new Date()),
        env: tracingEnv(endpoint),
        // The real clock's age run looks often: its birthdays are the timer's work below.
        tuning: { ...FAST, ageRunPeriodMs: 200 },
      }),
    );
  });
  afterAll(async () => {
    await f.t.close();
    await receiver.stop();
    await otlp.stop();
  });

  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpanId = '00f067aa0ba902b7';

  /** `span`'s ancestors in its trace, nearest first. */
  function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
    const chain: ReceivedSpan[] = [];
    let parentId = span.parentSpanId;
    for (;;) {
      const parent = spans.find((s) => s.traceId === span.traceId && s.spanId === parentId);
      if (!parent) {
        return chain;
      }
      chain.push(parent);
      parentId = parent.parentSpanId;
    }
  }

  it("puts a delivery's job in the trace of the request whose change caused it; its POST a CLIENT span sending traceparent", async () => {
    // A receiver's secret in the URL's path and query: never in a span.
    const webhook = await register(f, `${receiver.url}/s3cr3t-path?token=s3cr3t-query`, [
      'child.created',
    ]);
    const created = await f.t.app.inject({
      method: 'POST',
      url: `/api/v1/families/${f.familyId}/children`,
      headers: { ...f.who.auth, traceparent: `00-${traceId}-${callerSpanId}-01` },
      payload: { name: 'Traced', birth_date: '2016-05-04' },
    });
    expect(created.statusCode, created.body).toBe(201);
    await settled(f, webhook, 1);

    const [job, client] = await otlp.waitFor((spans) => {
      const job = spans.find(
        (s) => s.traceId === traceId && s.name === `job ${QUEUES.webhookDelivery}`,
      );
      const client = spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND.client);
      return job && client ? ([job, client] as const) : undefined;
    }, "the delivery's job and CLIENT spans in the request's trace");

    expect(job.kind).toBe(SPAN_KIND.consumer);
    expect(job.attributes).toMatchObject({
      'messaging.system': 'pg-boss',
      'messaging.destination.name': QUEUES.webhookDelivery,
    });
    // The job's span descends from the request's SERVER span, which continues the caller's.
    const server = ancestors(otlp.spans, job).find((s) => s.kind === SPAN_KIND.server);
    expect(server, 'the request span among the job span’s ancestors').toBeDefined();
    expect(server?.parentSpanId).toBe(callerSpanId);

    expect(client.parentSpanId).toBe(job.spanId);
    expect(client.name).toBe('POST webhook');
    expect(client.attributes).toMatchObject({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': receiver.port,
      'http.response.status_code': 204,
      'haven.webhook.outcome': 'succeeded',
      'haven.webhook.event': 'child.created',
    });
    expect(JSON.stringify(client)).not.toContain('s3cr3t');
    expect(JSON.stringify(job)).not.toContain('s3cr3t');

    // The receiver was told the POST's own span, in the request's trace.
    const posted = receiver.ofType('child.created');
    expect(posted).toHaveLength(1);
    expect(posted[0]?.headers.traceparent).toBe(`00-${traceId}-${client.spanId}-01`);
  });

  it("roots a job queued by a timer's work (the real clock's age run) in a trace of its own", async () => {
    const webhook = await register(f, receiver.url, ['child.age_changed']);
    // Born tomorrow, 12 years ago (a multiple of 4: 29 February stays a date).
    const tomorrow = new Date(f.t.clock.now().getTime() + 86_400_000);
    const birthDate = `${tomorrow.getUTCFullYear() - 12}${tomorrow.toISOString().slice(4, 10)}`;
    const created = await f.t.app.inject({
      method: 'POST',
      url: `/api/v1/families/${f.familyId}/children`,
      headers: f.who.auth,
      payload: { name: 'Birthday', birth_date: birthDate },
    });
    expect(created.statusCode, created.body).toBe(201);
    f.t.clock.advance(86_400_000);
    await settled(f, webhook, 1);

    const { job, client } = await otlp.waitFor((spans) => {
      const client = spans.find(
        (s) =>
          s.name === 'POST webhook' && s.attributes['haven.webhook.event'] === 'child.age_changed',
      );
      const job = client && spans.find((s) => s.spanId === client.parentSpanId);
      return job ? { job, client } : undefined;
    }, "the birthday delivery's spans");
    expect(job.name).toBe(`job ${QUEUES.webhookDelivery}`);
    expect(job.parentSpanId).toBe('');
    expect(job.traceId).not.toBe(traceId);
    const posted = receiver.ofType('child.age_changed');
    expect(posted[0]?.headers.traceparent).toBe(`00-${client.traceId}-${client.spanId}-01`);
  });
});
