// @haven/sdk against a real Haven (the project's harness, listening on a port): each auth
// mode on its routes, errors as HavenError, retries and idempotency against a server that
// fails on purpose, timeouts and aborts, pagination, withResponse, the device helper.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { newSession } from '../../../test/identity.js';
import { Haven, HavenError, watchDevicePolicy } from '../src/index.js';

/** A proxy in front of Haven that answers the next queued statuses itself, then forwards. */
class FlakyProxy {
  readonly faults: Array<{ status?: number; retryAfter?: string; hangMs?: number }> = [];
  readonly seen: Array<{ method: string; url: string; idempotencyKey: string | undefined }> = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const key = req.headers['idempotency-key'];
      this.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        idempotencyKey: typeof key === 'string' ? key : undefined,
      });
      const fault = this.faults.shift();
      if (fault?.hangMs !== undefined) {
        setTimeout(() => res.destroy(), fault.hangMs);
        return;
      }
      if (fault?.status !== undefined) {
        res.writeHead(fault.status, {
          'content-type': 'application/json',
          ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}),
        });
        res.end(
          JSON.stringify({ error: 'Injected', message: 'injected failure', code: fault.status }),
        );
        return;
      }
      const target = new URL(req.url ?? '/', this.target);
      const headers = { ...req.headers, host: target.host };
      const upstream = httpRequest(target, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('@haven/sdk against a running Haven', () => {
  let t: TestApp;
  let baseUrl = '';
  let proxy: FlakyProxy;

  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    proxy = new FlakyProxy(baseUrl);
    await proxy.start();
  });
  afterAll(async () => {
    await proxy.stop();
    await t.close();
  });

  it('sandbox session: the quick setup, a child, enforcement and its job, typed', async () => {
    const haven = new Haven({ baseUrl, sandboxSession: 'sdk-sandbox' });
    const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });
    expect(setup.rules).toHaveLength(20);
    const family = await haven.families.get(setup.family.id);
    expect(family.id).toBe(setup.family.id);
    const children = await haven.children.list(setup.family.id);
    expect(children.map((child) => child.name)).toContain('Ada');
    await haven.connections.create(setup.family.id, { platform_id: 'nextdns' });
    const job = await haven.enforcement.enforce(setup.child.id);
    let status = job.status;
    const deadline = Date.now() + 15_000;
    while ((status === 'pending' || status === 'running') && Date.now() < deadline) {
      status = (await haven.enforcement.getJob(job.id)).status;
    }
    expect(status).toBe('completed');
  });

  it('a year in ten seconds: a test clock past a birthday, and an age signal', async () => {
    const haven = new Haven({ baseUrl, sandboxSession: 'sdk-clock' });
    const clock = await haven.testClocks.create({ frozen_time: '2026-03-01T09:00:00Z' });
    const setup = await haven.setup.quick({
      child_name: 'Ada',
      birth_date: '2014-03-10',
      test_clock_id: clock.id,
    });
    const advancing = await haven.testClocks.advance(clock.id, {
      frozen_time: '2027-03-10T12:00:00Z',
    });
    expect(advancing.status).toBe('advancing');
    const deadline = Date.now() + 15_000;
    while ((await haven.testClocks.get(clock.id)).status !== 'ready') {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ada = await haven.children.get(setup.child.id);
    expect(ada).toMatchObject({ age: 13, age_group: 'teen', next_age_change_on: '2028-03-10' });

    const signal = await haven.children.recordAgeSignal(setup.child.id, {
      source: 'apple_declared_age_range',
      age_lower: 9,
      age_upper: 12,
      method: 'guardianDeclared',
    });
    expect(signal.source).toBe('apple_declared_age_range');
    expect(await haven.children.get(setup.child.id)).toMatchObject({
      age: 13,
      effective_age: 12,
      age_group: 'preteen',
      age_conflict: true,
    });
    expect(await haven.children.listAgeSignals(setup.child.id)).toHaveLength(1);
    await haven.testClocks.delete(clock.id);
  });

  it('session token and API key: the key calls the /developer twins', async () => {
    const session = await newSession(t.app);
    const asUser = new Haven({ baseUrl, sessionToken: session.token });
    const org = await asUser.orgs.create({ name: 'SDK Org' });
    const minted = await asUser.apiKeys.create(org.id, {
      name: 'sdk',
      environment: 'test',
      scopes: ['read:families', 'write:families'],
    });
    const asKey = new Haven({ baseUrl, apiKey: minted.key });
    const created = await asKey.families.create({ name: 'Keyed family' }).withResponse();
    expect(created.response.url).toBe(`${baseUrl}/api/v1/developer/families`);
    expect(created.data.name).toBe('Keyed family');
    expect(created.rateLimit).toMatchObject({ limit: expect.any(Number) });
    expect((await asKey.families.list()).map((f) => f.id)).toContain(created.data.id);
    const familyOfUser = await asUser.families.create({ name: 'Mine' });
    expect((await asUser.families.list()).map((f) => f.id)).toContain(familyOfUser.id);
  });

  it('MCP token: its family only', async () => {
    const session = await newSession(t.app);
    const asUser = new Haven({ baseUrl, sessionToken: session.token });
    const setup = await asUser.setup.quick({ child_name: 'Bo', birth_date: '2016-01-02' });
    const minted = await asUser.mcpTokens.create({ family_id: setup.family.id, label: 'sdk' });
    const asToken = new Haven({ baseUrl, mcpToken: minted.plain });
    expect((await asToken.families.get(setup.family.id)).id).toBe(setup.family.id);
  });

  it('throws HavenError with the status, message, reason and request id', async () => {
    const haven = new Haven({ baseUrl, sandboxSession: 'sdk-errors' });
    const missing = crypto.randomUUID();
    const error = await haven.families.get(missing).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(HavenError);
    expect(error).toMatchObject({ status: 404, message: 'family not found', error: 'Not Found' });
    expect((error as HavenError).requestId).toMatch(/.+/);
    const invalid = await haven.families.create({ name: '' }).catch((thrown: unknown) => thrown);
    expect(invalid).toMatchObject({ status: 400 });
  });

  it('retries a write through 503 and 429 with one Idempotency-Key, and it lands once', async () => {
    const haven = new Haven({ baseUrl: proxy.url, sandboxSession: 'sdk-retries', maxRetries: 3 });
    proxy.seen.length = 0;
    proxy.faults.push({ status: 503 }, { status: 429, retryAfter: '1' });
    const started = Date.now();
    const created = await haven.families.create({ name: 'Retried' }).withResponse();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // Retry-After honoured
    const attempts = proxy.seen.filter((s) => s.method === 'POST');
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.idempotencyKey)).size).toBe(1);
    expect(attempts[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const named = (await haven.families.list()).filter((f) => f.name === 'Retried');
    expect(named).toHaveLength(1);
    // The same key again is answered from the receipt, not written twice.
    const again = await haven.families
      .create({ name: 'Retried' }, { idempotencyKey: attempts[0]?.idempotencyKey as string })
      .withResponse();
    expect(again.replayed).toBe(true);
    expect(again.data.id).toBe(created.data.id);
  });

  it('does not retry other 4xx, and gives up after maxRetries with the last status', async () => {
    const haven = new Haven({ baseUrl: proxy.url, sandboxSession: 'sdk-retries', maxRetries: 2 });
    proxy.seen.length = 0;
    proxy.faults.push({ status: 409 });
    await expect(haven.families.create({ name: 'Conflict' })).rejects.toMatchObject({
      status: 409,
    });
    expect(proxy.seen).toHaveLength(1);
    proxy.seen.length = 0;
    proxy.faults.push({ status: 502 }, { status: 502 }, { status: 502 });
    await expect(haven.families.list()).rejects.toMatchObject({ status: 502 });
    expect(proxy.seen).toHaveLength(3);
  });

  it('bounds each attempt by timeoutMs, and an abort is never retried', async () => {
    const haven = new Haven({
      baseUrl: proxy.url,
      sandboxSession: 'sdk-timeouts',
      maxRetries: 1,
      timeoutMs: 200,
    });
    proxy.seen.length = 0;
    proxy.faults.push({ hangMs: 2_000 }, { hangMs: 2_000 });
    await expect(haven.families.list()).rejects.toMatchObject({ status: 0, error: 'Timeout' });
    expect(proxy.seen).toHaveLength(2);
    proxy.seen.length = 0;
    proxy.faults.push({ hangMs: 2_000 });
    const controller = new AbortController();
    const pending = haven.families.list({ signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toBeDefined();
    expect(proxy.seen).toHaveLength(1);
  });

  it('iterates an offset-paginated list page after page', async () => {
    const haven = new Haven({ baseUrl, sandboxSession: 'sdk-pages' });
    const setup = await haven.setup.quick({ child_name: 'Pia', birth_date: '2014-02-03' });
    await haven.connections.create(setup.family.id, { platform_id: 'nextdns' });
    for (let i = 0; i < 4; i++) {
      await haven.enforcement.enforce(setup.child.id);
    }
    const ids: string[] = [];
    for await (const job of haven.enforcement.listHistory.all({ limit: 2 })) {
      ids.push(job.id);
    }
    // Two to a page, the same jobs as one big page, in the same order, none twice.
    const onePage = await haven.enforcement.listHistory({ limit: 100 });
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect(ids).toEqual(onePage.map((job) => job.id));
  });

  it('device key: watchDevicePolicy hears a policy once, and again only when it changes', async () => {
    const parent = new Haven({ baseUrl, sandboxSession: 'sdk-device' });
    const setup = await parent.setup.quick({ child_name: 'Dev', birth_date: '2013-03-04' });
    const device = await parent.devices.register(setup.child.id, { device_name: 'tablet' });
    const agent = new Haven({ baseUrl, deviceKey: device.device_key });
    const heard: Array<string | undefined> = [];
    const controller = new AbortController();
    const watching = watchDevicePolicy(agent, {
      intervalMs: 50,
      signal: controller.signal,
      onPolicy: (_policy, etag) => {
        heard.push(etag);
      },
    });
    const until = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (heard.length < count && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await until(1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // several 304 polls
    expect(heard).toHaveLength(1);
    await parent.policies.putRule(setup.policy.id, 'web_custom_blocklist', {
      enabled: true,
      config: { domains: ['new.example'] },
    });
    await until(2);
    controller.abort();
    await watching;
    expect(heard).toHaveLength(2);
    expect(heard[1]).not.toBe(heard[0]);
  });
});
