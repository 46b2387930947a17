import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { longSession, newSession, type Session } from '../../../test/identity.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { systemResolver } from './address-guard.js';
import { DELIVERY_TIMEOUT_MS, RETRY_DELAYS_SECONDS } from './delivery-worker.js';

/** No waiting between attempts, and idle workers that look often. */
const FAST = { jobPollingIntervalSeconds: 0.5, webhookRetryDelaysSeconds: [0, 0, 0, 0, 0, 0, 0] };
const TIMEOUT_MS = 300;
const PINNED_HOST = 'receiver.haven.test';

interface Delivery {
  id: string;
  message_id: string;
  event: string;
  status: string;
  attempt: number;
  response_code: number | null;
  error: string | null;
  next_retry_at: string | null;
}

interface Fixture {
  t: TestApp;
  who: Session;
  familyId: string;
}

async function newFamily(t: TestApp, who: Session): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/families',
    headers: who.auth,
    payload: { name: 'Deliveries' },
  });
  return res.json().id;
}

async function register(f: Fixture, url: string, events: string[] = ['test']) {
  const res = await f.t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: f.who.auth,
    payload: { family_id: f.familyId, url, events },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

async function sendTest(f: Fixture, webhookId: string): Promise<Delivery> {
  const res = await f.t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${webhookId}/test`,
    headers: f.who.auth,
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

async function deliveries(f: Fixture, webhookId: string): Promise<Delivery[]> {
  const res = await f.t.app.inject({
    url: `/api/v1/webhooks/${webhookId}/deliveries`,
    headers: f.who.auth,
  });
  expect(res.statusCode).toBe(200);
  return res.json();
}

/**
 * Waits until the webhook has `count` attempts and none pending, and answers them as the API
 * shows them. Polls the table, not the API: the API's rate limit would count every look.
 */
async function settled(f: Fixture, webhookId: string, count: number): Promise<Delivery[]> {
  await eventually(async () => {
    const rows = await f.t.database.handle.db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('webhook_id', '=', webhookId)
      .execute();
    return rows.length >= count && rows.every((row) => row.status !== 'pending');
  }, `${count} settled deliveries`);
  return deliveries(f, webhookId);
}

describe('webhook deliveries (sandbox)', () => {
  const receiver = new WebhookReceiver();
  const f = {} as Fixture;

  beforeAll(async () => {
    await receiver.start();
    // Real time: Standard Webhooks libraries refuse timestamps 5 minutes away from now.
    f.t = await buildTestApp({
      clock: new TestClock(new Date()),
      tuning: {
        ...FAST,
        webhookTimeoutMs: TIMEOUT_MS,
        webhookResolver: async (host) =>
          host === PINNED_HOST ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(host),
      },
    });
    f.who = await newSession(f.t.app);
    f.familyId = await newFamily(f.t, f.who);
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 204 });
  });
  afterAll(async () => {
    await f.t.close();
    await receiver.stop();
  });

  it('signs a test message per Standard Webhooks: the standardwebhooks library verifies it', async () => {
    const webhook = await register(f, receiver.url, ['child.created']);
    const queued = await sendTest(f, webhook.id);
    expect(queued).toMatchObject({
      webhook_id: webhook.id,
      event: 'test',
      status: 'pending',
      attempt: 1,
      response_code: null,
      next_retry_at: null,
    });
    expect(queued.message_id).toMatch(/^msg_/);

    const [done] = await settled(f, webhook.id, 1);
    expect(done).toMatchObject({ id: queued.id, status: 'succeeded', response_code: 204 });
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    if (!request) {
      throw new Error('nothing received');
    }
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(queued.message_id);
    expect(request.headers['webhook-timestamp']).toBe(
      String(Math.floor(f.t.clock.now().getTime() / 1000)),
    );
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const verified = new Webhook(webhook.secret).verify(
      request.body,
      request.headers as Record<string, string>,
    );
    expect(verified).toEqual({
      type: 'test',
      timestamp: f.t.clock.now().toISOString(),
      family_id: f.familyId,
      data: { webhook_id: webhook.id, message: 'a test delivery from Haven' },
    });
    // Another secret does not verify it.
    const other = await register(f, receiver.url);
    expect(() =>
      new Webhook(other.secret).verify(request.body, request.headers as Record<string, string>),
    ).toThrow();
  });

  it('a receiver that fails twice then succeeds gets the same webhook-id three times and GET deliveries shows three attempts', async () => {
    receiver.answer = (_request, index) => ({ status: index < 2 ? 500 : 200 });
    const webhook = await register(f, receiver.url);
    const queued = await sendTest(f, webhook.id);
    const attempts = await settled(f, webhook.id, 3);
    expect(attempts.map((d) => [d.attempt, d.status, d.response_code])).toEqual([
      [3, 'succeeded', 200],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ]);
    expect(new Set(attempts.map((d) => d.message_id))).toEqual(new Set([queued.message_id]));
    expect(attempts[0]?.next_retry_at).toBeNull();
    expect(attempts[1]?.next_retry_at).not.toBeNull();
    expect(attempts[2]?.error).toBe('endpoint answered HTTP 500');

    expect(receiver.received).toHaveLength(3);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(
      Array(3).fill(queued.message_id),
    );
    // Byte-identical bodies, each verified on its own.
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    for (const request of receiver.received) {
      new Webhook(webhook.secret).verify(request.body, request.headers as Record<string, string>);
    }
    // A success ends the endpoint's run of failures.
    const row = await f.t.database.handle.db
      .selectFrom('webhooks')
      .select('failing_since')
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row.failing_since).toBeNull();
  });

  it('never follows a redirect: a 3xx is a failed attempt, and a message has 8 attempts at most', async () => {
    const elsewhere = new WebhookReceiver();
    await elsewhere.start();
    try {
      receiver.answer = () => ({ status: 302, headers: { location: elsewhere.url } });
      const webhook = await register(f, receiver.url);
      await sendTest(f, webhook.id);
      const attempts = await settled(f, webhook.id, 8);
      expect(attempts).toHaveLength(8);
      expect(attempts.every((d) => d.status === 'failed' && d.response_code === 302)).toBe(true);
      expect(attempts[0]).toMatchObject({
        attempt: 8,
        error: 'redirect not followed (HTTP 302)',
        next_retry_at: null,
      });
      expect(elsewhere.received).toEqual([]);
    } finally {
      await elsewhere.stop();
    }
  });

  it('fails an attempt the endpoint does not answer within the timeout, and retries it', async () => {
    expect(DELIVERY_TIMEOUT_MS).toBe(15_000);
    expect(RETRY_DELAYS_SECONDS).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
    receiver.answer = (_request, index) => (index === 0 ? 'hang' : { status: 200 });
    const webhook = await register(f, receiver.url);
    await sendTest(f, webhook.id);
    const attempts = await settled(f, webhook.id, 2);
    expect(attempts.map((d) => [d.attempt, d.status])).toEqual([
      [2, 'succeeded'],
      [1, 'failed'],
    ]);
    expect(attempts[1]).toMatchObject({ response_code: null, error: 'no response within 0.3 s' });
  });

  it('retry: a new attempt of the same message, with the same webhook-id and the same bytes', async () => {
    const webhook = await register(f, receiver.url);
    const first = await sendTest(f, webhook.id);
    await settled(f, webhook.id, 1);
    const retry = (id: string, deliveryId: string) =>
      f.t.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`,
        headers: f.who.auth,
      });
    const again = await retry(webhook.id, first.id);
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json()).toMatchObject({
      message_id: first.message_id,
      event: 'test',
      attempt: 2,
      status: 'pending',
    });
    expect(again.json().id).not.toBe(first.id);
    const attempts = await settled(f, webhook.id, 2);
    expect(attempts[0]).toMatchObject({ id: again.json().id, status: 'succeeded' });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]?.headers['webhook-id']).toBe(first.message_id);
    expect(receiver.received[1]?.body).toBe(receiver.received[0]?.body);

    const other = await register(f, receiver.url);
    const foreign = await retry(other.id, first.id);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('delivery not found');
  });

  it('connects to the address the resolver gave for the host, with the URL’s Host header', async () => {
    const webhook = await register(f, `http://${PINNED_HOST}:${receiver.port}/pinned`);
    await sendTest(f, webhook.id);
    const [done] = await settled(f, webhook.id, 1);
    expect(done?.status).toBe('succeeded');
    expect(receiver.received[0]?.path).toBe('/pinned');
    expect(receiver.received[0]?.headers.host).toBe(`${PINNED_HOST}:${receiver.port}`);
  });

  it('records a connection failure as a failed attempt with its cause', async () => {
    const webhook = await register(f, 'http://127.0.0.1:9/closed');
    await sendTest(f, webhook.id);
    const attempts = await settled(f, webhook.id, 8);
    expect(attempts[7]).toMatchObject({ attempt: 1, status: 'failed', response_code: null });
    expect(attempts[7]?.error).toMatch(/ECONNREFUSED/);
  });
});

describe('webhook auto-disable', () => {
  const receiver = new WebhookReceiver();
  const f = {} as Fixture;
  const DAY = 24 * 3600 * 1000;

  beforeAll(async () => {
    await receiver.start();
    f.t = await buildTestApp({ tuning: FAST });
    // The clock moves by days: a session that outlives it.
    f.who = await longSession(f.t);
    f.familyId = await newFamily(f.t, f.who);
  });
  afterAll(async () => {
    await f.t.close();
    await receiver.stop();
  });

  const webhookRow = (id: string) =>
    f.t.database.handle.db
      .selectFrom('webhooks')
      .select(['active', 'failing_since', 'disabled_reason'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('disables an endpoint failing for 5 days, stops retrying, and takes it back when re-enabled', async () => {
    receiver.answer = () => ({ status: 503 });
    const webhook = await register(f, receiver.url, ['child.created']);
    const started = f.t.clock.now();
    await sendTest(f, webhook.id);
    await settled(f, webhook.id, 8);
    expect(await webhookRow(webhook.id)).toMatchObject({ active: true, failing_since: started });

    f.t.clock.advance(4 * DAY);
    await sendTest(f, webhook.id);
    await settled(f, webhook.id, 16);
    expect((await webhookRow(webhook.id)).active).toBe(true);

    f.t.clock.advance(DAY);
    const last = await sendTest(f, webhook.id);
    await eventually(async () => !(await webhookRow(webhook.id)).active, 'the webhook disabled');
    expect(await webhookRow(webhook.id)).toMatchObject({
      failing_since: started,
      disabled_reason: 'endpoint failing for 5 days',
    });
    const attempts = await settled(f, webhook.id, 17);
    const ofLast = attempts.filter((d) => d.message_id === last.message_id);
    expect(ofLast).toMatchObject([{ attempt: 1, status: 'failed', next_retry_at: null }]);
    const shown = await f.t.app.inject({
      url: `/api/v1/webhooks/${webhook.id}`,
      headers: f.who.auth,
    });
    expect(shown.json()).toMatchObject({ active: false });

    // Disabled: no test messages, no events.
    const refused = await f.t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${webhook.id}/test`,
      headers: f.who.auth,
    });
    expect(refused.statusCode).toBe(409);
    const child = await f.t.app.inject({
      method: 'POST',
      url: `/api/v1/families/${f.familyId}/children`,
      headers: f.who.auth,
      payload: { name: 'Ada', birth_date: '2016-04-01' },
    });
    expect(child.statusCode).toBe(201);
    expect(await deliveries(f, webhook.id)).toHaveLength(17);

    receiver.answer = () => ({ status: 200 });
    const enabled = await f.t.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${webhook.id}`,
      headers: f.who.auth,
      payload: { active: true },
    });
    expect(enabled.json()).toMatchObject({
      active: true,
      failing_since: null,
      disabled_reason: null,
    });
    await sendTest(f, webhook.id);
    const [latest] = await settled(f, webhook.id, 18);
    expect(latest?.status).toBe('succeeded');
  });
});
