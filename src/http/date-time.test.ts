// Date-time fields take only instants both JavaScript and PostgreSQL can store. A leap second
// and year 0000 are valid RFC 3339 but were failed inserts (500) until the hostile-input
// test found them; they are a 400 in the envelope now, on every date-time field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { deviceAgent, quickSetup, registerDevice, sandbox } from '../../test/devices.js';
import { createOrg, mintKey, newSession } from '../../test/identity.js';

const UNSTORABLE = ['2016-12-31T23:59:60Z', '9999-12-31T23:59:60Z', '0000-01-01T00:00:00Z'];

describe('date-time fields', () => {
  let t: TestApp;
  let deviceKey: string;
  beforeAll(async () => {
    t = await buildTestApp();
    const who = sandbox('date-times');
    const { childId } = await quickSetup(t, who);
    deviceKey = (await registerDevice(t, who, childId)).device_key;
  });
  afterAll(() => t.close());

  it.each(UNSTORABLE)('refuse %s with 400 in a device report and a viewing entry', async (at) => {
    const agent = deviceAgent(t);
    for (const body of [
      { report_type: 'screen_time', payload: {}, reported_at: at },
      {
        report_type: 'viewing',
        payload: { platform: 'netflix', title: 'Bluey', watched_at: at },
        reported_at: '2026-01-15T12:00:00.000Z',
      },
    ]) {
      const res = await agent.report(deviceKey, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: 'Bad Request', code: 400 });
    }
  });

  it.each(UNSTORABLE)('refuse %s with 400 as an API key expiry', async (at) => {
    const owner = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/developers/orgs/${org.id}/keys`,
      headers: owner.auth,
      payload: { name: 'x', environment: 'test', expires_at: at },
    });
    expect(res.statusCode, res.body).toBe(400);
  });

  it('still take an ordinary instant, with an offset', async () => {
    const res = await deviceAgent(t).report(deviceKey, {
      report_type: 'screen_time',
      payload: {},
      reported_at: '2026-01-15T13:00:00+01:00',
    });
    expect(res.statusCode, res.body).toBe(202);
    const owner = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    expect((await mintKey(t.app, owner, org.id)).key).toMatch(/^svc_/);
  });
});
