// CONTRACT.md §8 device rows, the product side: registration, listing, revocation, the
// tenant wall, events, last-seen batching.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createTestDatabase } from '../../../test/database.js';
import {
  type ChildSetup,
  deviceAgent,
  deviceKey,
  expectEnvelope,
  quickSetup,
  registerDevice,
  sandbox,
} from '../../../test/devices.js';
import { bearer, createOrg, mintKey, newSession } from '../../../test/identity.js';

const DEVICE_FIELDS = [
  'id',
  'child_id',
  'family_id',
  'device_name',
  'platform_id',
  'device_model',
  'os_version',
  'app_version',
  'status',
  'key_prefix',
  'last_seen_at',
  'acknowledged_version',
  'enforcement_status',
  'created_at',
  'updated_at',
  'revoked_at',
].sort();

describe('devices (CONTRACT.md §8 device rows)', () => {
  let t: TestApp;
  const parent = sandbox('devices-parent');
  let setup: ChildSetup;
  let agent: ReturnType<typeof deviceAgent>;
  const listDevices = async () => {
    const res = await t.app.inject({
      url: `/api/v1/children/${setup.childId}/devices`,
      headers: parent,
    });
    expect(res.statusCode).toBe(200);
    return res.json() as Array<Record<string, unknown>>;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    agent = deviceAgent(t);
    setup = await quickSetup(t, parent);
  });
  afterAll(() => t.close());

  it('registers a device: the key is shown once and only its SHA-256 is stored', async () => {
    const first = await registerDevice(t, parent, setup.childId, {
      device_name: '  Kitchen iPad  ',
      platform_id: 'ios',
      device_model: 'iPad Air',
      os_version: '',
    });
    expect(first.device_key).toMatch(/^svcdev_[0-9A-Za-z]{40}$/);
    expect(Object.keys(first.device).sort()).toEqual(DEVICE_FIELDS);
    expect(first.device).toMatchObject({
      child_id: setup.childId,
      family_id: setup.familyId,
      device_name: 'Kitchen iPad',
      platform_id: 'ios',
      device_model: 'iPad Air',
      os_version: null,
      app_version: null,
      status: 'active',
      key_prefix: first.device_key.slice(0, 15),
      last_seen_at: null,
      acknowledged_version: null,
      enforcement_status: null,
      revoked_at: null,
    });

    t.clock.advance(1_000);
    const second = await registerDevice(t, parent, setup.childId);
    const listed = await listDevices();
    expect(listed.map((d) => d.id).slice(0, 2)).toEqual([second.device.id, first.device.id]);
    for (const device of listed) {
      expect(Object.keys(device).sort()).toEqual(DEVICE_FIELDS);
    }
    expect(JSON.stringify(listed)).not.toContain(first.device_key);

    const rows = await sql<{ key_hash: string; row: string }>`
      select key_hash, row_to_json(d)::text as row from devices d where id = ${first.device.id}
    `.execute(t.database.handle.db);
    const sha256 = createHash('sha256').update(first.device_key).digest('hex');
    expect(rows.rows[0]?.key_hash).toBe(sha256);
    expect(rows.rows[0]?.row).not.toContain(first.device_key.slice(15));
    expect(t.rawLogs.join('\n')).not.toContain(first.device_key);
  });

  it('answers 400 for malformed ids and a blank name, 404 for an unknown child', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/children/not-a-uuid/devices',
      headers: parent,
      payload: { device_name: 'x' },
    });
    expectEnvelope(bad, 400, 'invalid child ID');
    const badDelete = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/devices/123',
      headers: parent,
    });
    expectEnvelope(badDelete, 400, 'invalid device ID');
    const blank = await t.app.inject({
      method: 'POST',
      url: `/api/v1/children/${setup.childId}/devices`,
      headers: parent,
      payload: { device_name: '   ' },
    });
    expectEnvelope(blank, 400, 'device_name is required');
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/api/v1/children/00000000-0000-4000-8000-000000000000/devices',
      headers: parent,
      payload: { device_name: 'x' },
    });
    expectEnvelope(unknown, 404, 'child not found');
  });

  it('a revoked key is refused at once; revoking again is 204', async () => {
    const { device, device_key: key } = await registerDevice(t, parent, setup.childId);
    expect((await agent.policy(key)).statusCode).toBe(200); // now cached as valid
    const revoke = () =>
      t.app.inject({ method: 'DELETE', url: `/api/v1/devices/${device.id}`, headers: parent });
    const first = await revoke();
    expect(first.statusCode).toBe(204);
    expect(first.body).toBe('');
    // The clock does not move: the cache TTL cannot be what drops the key.
    expectEnvelope(await agent.policy(key), 401, 'invalid or revoked device key');
    expectEnvelope(await agent.ack(key, { version: 1 }), 401, 'invalid or revoked device key');
    expect((await revoke()).statusCode).toBe(204);
    const listed = (await listDevices()).find((d) => d.id === device.id);
    expect(listed).toMatchObject({ status: 'revoked', revoked_at: t.clock.now().toISOString() });
  });

  it('another tenant cannot see, register or revoke devices', async () => {
    const { device, device_key: key } = await registerDevice(t, parent, setup.childId);
    const stranger = sandbox('devices-stranger');
    const attempts = [
      t.app.inject({ url: `/api/v1/children/${setup.childId}/devices`, headers: stranger }),
      t.app.inject({
        method: 'POST',
        url: `/api/v1/children/${setup.childId}/devices`,
        headers: stranger,
        payload: { device_name: 'intruder' },
      }),
      t.app.inject({ method: 'DELETE', url: `/api/v1/devices/${device.id}`, headers: stranger }),
      t.app.inject({ url: `/api/v1/viewing-history/${setup.childId}`, headers: stranger }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect([403, 404], res.body).toContain(res.statusCode);
    }
    // Another org's key: the device does not exist for it.
    const owner = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    const minted = await mintKey(t.app, owner, org.id, { scopes: ['write:devices'] });
    const viaKey = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/developer/devices/${device.id}`,
      headers: bearer(minted.key),
    });
    expectEnvelope(viaKey, 404, 'device not found');
    const listed = (await listDevices()).find((d) => d.id === device.id);
    expect(listed?.status).toBe('active');
    expect((await agent.policy(key)).statusCode).toBe(200);
  });

  it('publishes device.registered/report/acknowledged/revoked with JSON-ready data', async () => {
    const other = await quickSetup(t, parent, 'Eve');
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: parent,
      payload: {
        family_id: other.familyId,
        // Nothing listens there: only the stored messages matter here.
        url: 'http://127.0.0.1:9/hooks',
        events: ['device.registered', 'device.report', 'device.acknowledged', 'device.revoked'],
      },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const { device, device_key: key } = await registerDevice(t, parent, other.childId);
    expect(
      (
        await agent.report(key, {
          report_type: 'screen_time',
          payload: { minutes: 5 },
          reported_at: '2026-01-15T10:00:00+01:00',
        })
      ).statusCode,
    ).toBe(202);
    expect((await agent.ack(key, { version: 3 })).statusCode).toBe(200);
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/devices/${device.id}`,
      headers: parent,
    });
    expect(revoked.statusCode).toBe(204);

    const rows = await t.database.handle.db
      .selectFrom('webhook_deliveries')
      .select(['event', 'payload'])
      .where('webhook_id', '=', hook.json().id)
      .where('attempt', '=', 1)
      .execute();
    const byType = new Map(rows.map((row) => [row.event, JSON.parse(row.payload)]));
    expect([...byType.keys()].sort()).toEqual([
      'device.acknowledged',
      'device.registered',
      'device.report',
      'device.revoked',
    ]);
    for (const message of byType.values()) {
      expect(message.family_id).toBe(other.familyId);
    }
    expect(byType.get('device.registered').data).toEqual(device);
    expect(byType.get('device.report').data).toEqual({
      device_id: device.id,
      child_id: other.childId,
      report_type: 'screen_time',
      reported_at: '2026-01-15T09:00:00.000Z',
    });
    expect(byType.get('device.acknowledged').data).toEqual({
      device_id: device.id,
      child_id: other.childId,
      acknowledged_version: 3,
    });
    expect(byType.get('device.revoked').data).toMatchObject({
      id: device.id,
      status: 'revoked',
      acknowledged_version: 3,
      revoked_at: t.clock.now().toISOString(),
    });
  });
});

describe('device last_seen_at', () => {
  it('is batched in memory and written by the flush on close, never per request', async () => {
    const database = await createTestDatabase();
    try {
      const t = await buildTestApp({ database });
      const parent = sandbox('seen-parent');
      const setup = await quickSetup(t, parent);
      const { device, device_key: key } = await registerDevice(t, parent, setup.childId);
      t.clock.advance(5_000);
      const seenAt = t.clock.now();
      expect(
        (await t.app.inject({ url: '/api/v1/device/policy', headers: deviceKey(key) })).statusCode,
      ).toBe(200);
      const lastSeen = () =>
        database.handle.db
          .selectFrom('devices')
          .select('last_seen_at')
          .where('id', '=', device.id)
          .executeTakeFirstOrThrow();
      expect((await lastSeen()).last_seen_at).toBeNull();
      await t.close(); // the flush on close; the database stays
      expect((await lastSeen()).last_seen_at).toEqual(seenAt);
    } finally {
      await database.drop();
    }
  });
});
