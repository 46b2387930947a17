// Partner calls and the enforcement runs behind them, as GET /metrics counts them and as
// traces show them (CONTRACT.md §13), in a production app against local doubles of NextDNS
// and Control D: one count per HTTP attempt by platform id and outcome (a 503 retried, a 401
// not), one per run; with tracing on, the run's span in the trace of the request that queued
// it and each attempt a CLIENT span whose `traceparent` the partner receives; with tracing
// off, no `traceparent` at all.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import {
  JwksServer,
  newSigningKey,
  type SigningKey,
  signSession,
} from '../../../test/jwks-server.js';
import {
  type Api,
  connectPartners,
  type Doubles,
  type Job,
  resultFor,
  setUpFamily,
  startDoubles,
} from '../../../test/live-partners.js';
import { type MetricSnapshot, scrape } from '../../../test/metric-samples.js';
import { OtlpReceiver, SPAN_KIND, tracingEnv } from '../../../test/otlp-receiver.js';
import type { DoubleServer } from '../../../test/partner-doubles/double-server.js';
import { productionEnv } from '../../../test/production.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { QUEUES } from '../../jobs/queues.js';

const ISS = 'https://id.example.test/';
const METRICS_TOKEN = 'metrics-token-for-partner-tests';
/** As live-enforcement.test.ts: long enough that a busy machine is not a partner timeout. */
const PARTNER_HTTP = { timeoutMs: 2_000, backoffMs: 20, maxRetries: 2 };

interface Setup {
  t: TestApp;
  api: Api;
  family: Awaited<ReturnType<typeof setUpFamily>>;
  /** The enforce request, with extra headers; answers the queued job's id. */
  enforce(headers?: Record<string, string>): Promise<string>;
  /** Until the job has finished; answers it. */
  finished(jobId: string): Promise<Job>;
  /** Until no enforcement run is queued or under way (setup's automatic ones included). */
  idle(): Promise<void>;
}

async function productionApp(
  jwks: { url: string; key: SigningKey },
  doubles: Doubles,
  env: Record<string, string> = {},
): Promise<Setup> {
  const { key } = jwks;
  const t = await buildTestApp({
    env: {
      ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }),
      ...doubles.env,
      METRICS_TOKEN,
      ...env,
    },
    tuning: { jobPollingIntervalSeconds: 0.5, partnerHttp: PARTNER_HTTP },
  });
  const iat = Math.floor(t.clock.now().getTime() / 1000);
  const session = await signSession(key, {
    iss: ISS,
    sub: `parent-${Math.random()}`,
    iat,
    exp: iat + 3600,
  });
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await t.app.inject({
      method: method as 'GET',
      url: path,
      headers: { authorization: `Bearer ${session}`, ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
  };
  const api: Api = (method, path, body) => call(method, path, body);
  doubles.reset();
  const family = await setUpFamily(api);
  await connectPartners(api, family.familyId);
  const setup: Setup = {
    t,
    api,
    family,
    async enforce(headers = {}) {
      const queued = await call('POST', `/api/v1/children/${family.childId}/enforce`, {}, headers);
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      return queued.body.id as string;
    },
    async finished(jobId) {
      let job: Job | undefined;
      await eventually(
        async () => {
          job = (await api('GET', `/api/v1/enforcement/jobs/${jobId}`)).body;
          return job !== undefined && !['pending', 'running'].includes(job.status);
        },
        'the enforcement job to finish',
        30_000,
      );
      return job as Job;
    },
    async idle() {
      // pg-boss's rows, not the jobs' own: a run is counted after its job's row is written,
      // before pg-boss marks it done.
      await eventually(
        async () => {
          const { rows } = await sql<{ n: number }>`
            select count(*)::int as n from pgboss.job
            where name = ${QUEUES.enforcement} and state < 'completed'`.execute(
            t.database.handle.db,
          );
          return rows[0]?.n === 0;
        },
        'every enforcement run to end',
        30_000,
      );
    },
  };
  return setup;
}

describe('partner calls and enforcement runs (production)', () => {
  const jwks = new JwksServer();
  let key: SigningKey;
  let doubles: Doubles;

  beforeAll(async () => {
    await jwks.start();
    key = await newSigningKey('partner-telemetry');
    jwks.keys.push(key.jwk);
    doubles = await startDoubles();
  });
  afterAll(async () => {
    await doubles.stop();
    await jwks.stop();
  });

  describe('counted (tracing off)', () => {
    let s: Setup;
    beforeAll(async () => {
      s = await productionApp({ url: jwks.url, key }, doubles);
    });
    afterAll(() => s.t.close());

    const calls = (m: MetricSnapshot, platform: string, outcome?: string) =>
      m.value('haven_partner_calls_total', { platform, ...(outcome ? { outcome } : {}) });
    const timed = (m: MetricSnapshot, platform: string) =>
      m.value('haven_partner_call_duration_seconds_count', { platform });
    const runs = (m: MetricSnapshot, outcome: string) =>
      m.value('haven_jobs_total', { queue: QUEUES.enforcement, outcome });

    it('counts every attempt by platform id and outcome (a 503 retried, a 401 not) and the run as completed', async () => {
      await s.idle();
      const served = {
        nextdns: doubles.nextdns.received.length,
        controld: doubles.controld.received.length,
      };
      const before = await scrape(s.t.app, METRICS_TOKEN);
      // NextDNS's first read answers 503, its retry succeeds; Control D refuses the token.
      doubles.nextdns.faults.push({ status: 503, match: /^GET / });
      doubles.controld.faults.push({ status: 401, body: { success: false } });

      const job = await s.finished(await s.enforce());
      expect(job.status, JSON.stringify(job)).toBe('partial');
      expect(resultFor(job, 'nextdns').status).toBe('success');
      expect(resultFor(job, 'controld').status).toBe('failed');
      // The run's count is recorded when its handler returns, just after the job's row.
      await eventually(
        async () =>
          runs(await scrape(s.t.app, METRICS_TOKEN), 'completed') - runs(before, 'completed') === 1,
        'the run counted',
      );
      const after = await scrape(s.t.app, METRICS_TOKEN);
      const delta = (platform: string, outcome?: string) =>
        calls(after, platform, outcome) - calls(before, platform, outcome);

      const nextdnsAttempts = doubles.nextdns.received.length - served.nextdns;
      expect(nextdnsAttempts).toBeGreaterThan(2);
      expect(delta('nextdns', 'unavailable')).toBe(1);
      expect(delta('nextdns', 'ok')).toBe(nextdnsAttempts - 1);
      expect(delta('nextdns')).toBe(nextdnsAttempts);
      expect(timed(after, 'nextdns') - timed(before, 'nextdns')).toBe(nextdnsAttempts);

      // One attempt: a refusal of the credentials is not retried.
      expect(doubles.controld.received.length - served.controld).toBe(1);
      expect(delta('controld', 'credentials')).toBe(1);
      expect(delta('controld')).toBe(1);
      expect(timed(after, 'controld') - timed(before, 'controld')).toBe(1);

      // Labels name the platform id, never the display name.
      for (const sample of after.find('haven_partner_calls_total')) {
        expect(['nextdns', 'controld']).toContain(sample.labels.platform);
        expect(['ok', 'credentials', 'not_found', 'rejected', 'unavailable', 'timeout']).toContain(
          sample.labels.outcome,
        );
      }
      expect(runs(after, 'failed') - runs(before, 'failed')).toBe(0);

      // Tracing is off: no partner was sent a trace.
      for (const double of [doubles.nextdns, doubles.controld] as DoubleServer[]) {
        for (const { headers } of double.received) {
          expect(headers.traceparent).toBeUndefined();
        }
      }
    });
  });

  describe('traced', () => {
    const otlp = new OtlpReceiver();
    let s: Setup;
    beforeAll(async () => {
      const endpoint = await otlp.start();
      s = await productionApp({ url: jwks.url, key }, doubles, tracingEnv(endpoint));
    });
    afterAll(async () => {
      await s.t.close();
      await otlp.stop();
    });

    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const callerSpanId = 'b7ad6b7169203331';

    it('puts the run in the trace of the request that queued it, each partner attempt a CLIENT span whose traceparent the partner receives', async () => {
      await s.idle();
      const served = {
        nextdns: doubles.nextdns.received.length,
        controld: doubles.controld.received.length,
      };
      doubles.nextdns.faults.push({ status: 503, match: /^GET / });
      const job = await s.finished(
        await s.enforce({ traceparent: `00-${traceId}-${callerSpanId}-01` }),
      );
      expect(job.status, JSON.stringify(job)).toBe('completed');
      const attempts = {
        nextdns: doubles.nextdns.received.slice(served.nextdns),
        controld: doubles.controld.received.slice(served.controld),
      };
      const total = attempts.nextdns.length + attempts.controld.length;

      const spans = await otlp.waitFor((received) => {
        const inTrace = received.filter((span) => span.traceId === traceId);
        const clients = inTrace.filter((span) => span.kind === SPAN_KIND.client);
        const run = inTrace.find((span) => span.name === `job ${QUEUES.enforcement}`);
        return run && clients.length === total ? { run, clients, inTrace } : undefined;
      }, "the run's span and one CLIENT span per partner attempt");

      // The request's SERVER span continues the caller's; the run's span is its child (the
      // job was queued in the request's change).
      const server = spans.inTrace.find(
        (span) => span.kind === SPAN_KIND.server && span.parentSpanId === callerSpanId,
      );
      expect(server, 'the request span').toBeDefined();
      expect(spans.run.kind).toBe(SPAN_KIND.consumer);
      expect(spans.run.parentSpanId).toBe(server?.spanId);
      expect(spans.run.attributes).toMatchObject({
        'messaging.system': 'pg-boss',
        'messaging.destination.name': QUEUES.enforcement,
      });

      for (const [platform, double] of [
        ['nextdns', doubles.nextdns],
        ['controld', doubles.controld],
      ] as const) {
        const clients = spans.clients.filter(
          (span) => span.attributes['haven.partner.platform'] === platform,
        );
        expect(clients).toHaveLength(attempts[platform].length);
        const url = new URL(double.url);
        for (const client of clients) {
          expect(client.parentSpanId).toBe(spans.run.spanId);
          expect(client.name).toBe(`${client.attributes['http.request.method']} ${platform}`);
          expect(client.attributes).toMatchObject({
            'server.address': url.hostname,
            'server.port': Number(url.port),
          });
          expect(typeof client.attributes['http.response.status_code']).toBe('number');
        }
        // Each attempt named its own span to the partner, in the request's trace.
        expect(attempts[platform].map(({ headers }) => headers.traceparent).sort()).toEqual(
          clients.map((client) => `00-${traceId}-${client.spanId}-01`).sort(),
        );
        // No credential reaches a span.
        const text = JSON.stringify(clients);
        expect(text).not.toContain('nd-key-');
        expect(text).not.toContain('cd-token-');
      }
      // The 503 is its own attempt's span, an error, and its retry says it is one.
      const refused = spans.clients.find(
        (span) => span.attributes['http.response.status_code'] === 503,
      );
      expect(refused?.attributes).toMatchObject({
        'haven.partner.platform': 'nextdns',
        'haven.partner.outcome': 'unavailable',
      });
      expect(refused?.statusCode).toBe(2);
      expect(
        spans.clients.some(
          (span) =>
            span.attributes['haven.partner.platform'] === 'nextdns' &&
            span.attributes['http.request.resend_count'] === 1,
        ),
      ).toBe(true);
    });
  });
});
