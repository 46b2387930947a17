// docs/decisions.md "Logs hold no secrets": a full request mix at the most verbose log level,
// then every log line is searched for every secret Haven issued or was handed (session JWT, API
// key, MCP token, device key, webhook secret, platform credentials). One hit fails the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';
import { TestClock } from './clock.js';
import { bearer, createOrg, mintKey, newSession } from './identity.js';
import { eventually } from './tcp-proxy.js';
import { WebhookReceiver } from './webhook-receiver.js';

describe('no issued secret ever reaches the logs', () => {
  let t: TestApp;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    t = await buildTestApp({ env: { LOG_LEVEL: 'trace' }, clock: new TestClock(new Date()) });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('holds for every kind of secret, on successes and failures alike', async () => {
    const secrets: string[] = [];
    let sent = 0;
    const json = { 'content-type': 'application/json' };
    const send = async (
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
      url: string,
      headers: Record<string, string>,
      payload?: unknown,
    ) => {
      sent++;
      const res = await t.app.inject({
        method,
        url,
        headers: { ...json, ...headers },
        ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
      });
      return { status: res.statusCode, body: res.body ? res.json() : undefined };
    };

    const session = await newSession(t.app);
    secrets.push(session.token);
    const org = await createOrg(t.app, session);
    const key = await mintKey(t.app, session, org.id);
    secrets.push(key.key);
    const auth = bearer(key.key);

    const setup = await send('POST', '/api/v1/developer/setup/quick', auth, {
      child_name: 'Lou',
      birth_date: '2015-04-05',
    });
    expect(setup.status).toBe(201);
    const familyId: string = setup.body.family.id;
    const childId: string = setup.body.child.id;

    const sessionFamily = await send('POST', '/api/v1/families', session.auth, { name: 'Mine' });
    const mcp = await send('POST', '/api/v1/mcp/tokens', session.auth, {
      family_id: sessionFamily.body.id,
      label: 'assistant',
    });
    expect(mcp.status).toBe(201);
    secrets.push(mcp.body.plain);

    const credential = 'nextdns-api-key-VERYSECRET-0123456789';
    secrets.push(credential);
    expect(
      (
        await send('POST', `/api/v1/developer/families/${familyId}/connections`, auth, {
          platform_id: 'nextdns',
          credentials: { api_key: credential, profile_id: 'abc123' },
        })
      ).status,
    ).toBe(201);

    const hook = await send('POST', '/api/v1/developer/webhooks', auth, {
      family_id: familyId,
      url: receiver.url,
      events: ['*'],
    });
    expect(hook.status).toBe(201);
    secrets.push(hook.body.secret);

    const device = await send('POST', `/api/v1/developer/children/${childId}/devices`, auth, {
      device_name: 'Tablet',
    });
    expect(device.status).toBe(201);
    const deviceKey: string = device.body.device_key;
    secrets.push(deviceKey);

    // Successes through every credential, and the same secrets refused or misused.
    const asDevice = { 'x-device-key': deviceKey };
    expect((await send('GET', '/api/v1/device/policy', asDevice)).status).toBe(200);
    expect(
      (
        await send('POST', '/api/v1/device/report', asDevice, {
          report_type: 'viewing',
          reported_at: '2026-01-01T00:00:00Z',
          payload: { platform: 'netflix', title: 'Anything', watched_at: '2026-01-01T00:00:00Z' },
        })
      ).status,
    ).toBe(202);
    expect((await send('POST', '/api/v1/device/ack', asDevice, { version: 1 })).status).toBe(200);
    expect((await send('GET', '/api/v1/families', bearer(mcp.body.plain))).status).toBe(200);
    expect((await send('GET', '/api/v1/auth/me', session.auth)).status).toBe(200);
    const job = await send('POST', `/api/v1/developer/children/${childId}/enforce`, auth, {});
    expect(job.status).toBe(202);
    await send(
      'PUT',
      `/api/v1/developer/policies/${setup.body.policy.id}/rules/dm_restriction`,
      auth,
      {
        enabled: true,
        config: { mode: 'contacts_only' },
      },
    );
    // Misuse: secrets in the wrong header, in a query string, in a body, truncated.
    await send('GET', '/api/v1/developers/orgs', auth);
    await send('GET', `/api/v1/families?api_key=${key.key}`, {});
    await send('GET', '/api/v1/device/policy', { authorization: `Bearer ${deviceKey}` });
    await send('GET', '/api/v1/device/policy', { 'x-device-key': `${deviceKey}x` });
    await send('GET', '/api/v1/families', bearer(`${session.token}x`));
    await send('GET', '/api/v1/families', { 'x-api-key': `${key.key}x` });
    await send('POST', '/api/v1/developer/webhooks', auth, { url: hook.body.secret });
    await send('POST', '/api/v1/families', session.auth, { name: mcp.body.plain, extra: key.key });

    // Revoked secrets, used again.
    await send('DELETE', `/api/v1/developer/devices/${device.body.device.id}`, auth);
    expect((await send('GET', '/api/v1/device/policy', asDevice)).status).toBe(401);
    await send('DELETE', `/api/v1/developers/orgs/${org.id}/keys/${key.id}`, session.auth);
    expect((await send('GET', '/api/v1/developer/families', auth)).status).toBe(401);

    // Webhooks went out (signed with the secret) and their attempts were logged.
    await eventually(async () => receiver.received.length >= 3, 'webhook deliveries');
    // The scan saw what it should: a line for every request sent here, at least.
    expect(t.logs.filter((line) => line.msg === 'request completed').length).toBeGreaterThan(sent);
    for (const secret of secrets) {
      const hits = t.rawLogs.filter((line) => line.includes(secret));
      expect(hits, `a log line holds ${secret.slice(0, 10)}…`).toEqual([]);
    }
  });
});
