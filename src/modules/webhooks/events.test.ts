import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { newSession, type Session } from '../../../test/identity.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';

interface Message {
  type: string;
  timestamp: string;
  family_id: string;
  data: Record<string, unknown>;
}

const CHANGES = [
  'child.created',
  'child.updated',
  'child.deleted',
  'policy.created',
  'policy.updated',
  'policy.activated',
  'policy.paused',
  'connection.created',
  'connection.deleted',
];

describe('domain events reach subscribed webhooks', () => {
  const all = new WebhookReceiver();
  const narrow = new WebhookReceiver();
  const off = new WebhookReceiver();
  let t: TestApp;
  let parent: Session;
  let familyId: string;

  const call = async (options: InjectOptions, status: number) => {
    const res = await t.app.inject({ ...options, headers: parent.auth });
    expect(res.statusCode, res.body).toBe(status);
    return res.statusCode === 204 ? undefined : res.json();
  };
  const subscribe = (url: string, events: string[], family = familyId) =>
    call(
      { method: 'POST', url: '/api/v1/webhooks', payload: { family_id: family, url, events } },
      201,
    );
  const messages = (receiver: WebhookReceiver): Message[] =>
    receiver.received.map((r) => JSON.parse(r.body));

  beforeAll(async () => {
    for (const receiver of [all, narrow, off]) {
      await receiver.start();
    }
    t = await buildTestApp({ tuning: { jobPollingIntervalSeconds: 0.5 } });
    parent = await newSession(t.app);
    familyId = (
      await call({ method: 'POST', url: '/api/v1/families', payload: { name: 'Evented' } }, 201)
    ).id;
  });
  afterAll(async () => {
    await t.close();
    for (const receiver of [all, narrow, off]) {
      await receiver.stop();
    }
  });

  it('announces child, policy and connection writes with the resource as the API answered it', async () => {
    await subscribe(all.url, CHANGES);
    await subscribe(narrow.url, ['connection.created']);
    const disabled = await subscribe(off.url, ['*']);
    await call(
      { method: 'PATCH', url: `/api/v1/webhooks/${disabled.id}`, payload: { active: false } },
      200,
    );

    const child = await call(
      {
        method: 'POST',
        url: `/api/v1/families/${familyId}/children`,
        payload: { name: 'Mira', birth_date: '2015-06-01' },
      },
      201,
    );
    const renamed = await call(
      { method: 'PATCH', url: `/api/v1/children/${child.id}`, payload: { name: 'Mira K' } },
      200,
    );
    const policy = await call(
      { method: 'POST', url: `/api/v1/children/${child.id}/policies`, payload: { name: 'School' } },
      201,
    );
    const p = `/api/v1/policies/${policy.id}`;
    await call(
      {
        method: 'PUT',
        url: `${p}/rules/web_filter_level`,
        payload: { enabled: true, config: { level: 'strict' } },
      },
      200,
    );
    await call({ method: 'POST', url: `${p}/generate-from-age`, payload: {} }, 200);
    await call({ method: 'PUT', url: `${p}/rules`, payload: { rules: [] } }, 200);
    await call({ method: 'DELETE', url: `${p}/rules/web_filter_level` }, 204);
    const patched = await call({ method: 'PATCH', url: p, payload: { priority: 5 } }, 200);
    const activated = await call({ method: 'POST', url: `${p}/activate` }, 200);
    const paused = await call({ method: 'POST', url: `${p}/pause` }, 200);
    const connection = await call(
      {
        method: 'POST',
        url: `/api/v1/families/${familyId}/connections`,
        payload: {
          platform_id: 'nextdns',
          credentials: { api_key: 'never-in-an-event', profile_id: 'abc123' },
        },
      },
      201,
    );
    await call({ method: 'DELETE', url: `/api/v1/connections/${connection.id}` }, 204);
    await call({ method: 'DELETE', url: `/api/v1/children/${child.id}` }, 204);

    const expected = [
      'child.created',
      'child.updated',
      'policy.created',
      ...Array(4).fill('policy.updated'),
      'policy.updated',
      'policy.activated',
      'policy.paused',
      'connection.created',
      'connection.deleted',
      'child.deleted',
    ];
    await eventually(async () => all.received.length >= expected.length, 'every event delivered');
    const got = messages(all);
    expect(got.map((m) => m.type).sort()).toEqual([...expected].sort());
    expect(got.every((m) => m.family_id === familyId)).toBe(true);
    const one = (type: string) => got.filter((m) => m.type === type).map((m) => m.data);

    expect(one('child.created')).toEqual([child]);
    expect(one('child.updated')).toEqual([renamed]);
    // An erasure's notice names the child by id only (CONTRACT.md §12.3).
    expect(one('child.deleted')).toEqual([{ id: child.id, family_id: familyId }]);
    expect(one('policy.created')).toEqual([policy]);
    // Every change of the policy or its rules, one event each, the policy after it.
    const versions = one('policy.updated').map((d) => d.version);
    expect(versions.sort()).toEqual([2, 3, 4, 5, 6]);
    expect(one('policy.updated').find((d) => d.version === 6)).toEqual(patched);
    expect(one('policy.activated')).toEqual([activated]);
    expect(one('policy.paused')).toEqual([paused]);
    expect(Object.keys(activated).sort()).toEqual(
      [
        'id',
        'child_id',
        'name',
        'status',
        'priority',
        'version',
        'strictness',
        'paused_reason',
        'created_at',
        'updated_at',
      ].sort(),
    );
    expect(one('connection.created')).toEqual([connection]);
    expect(one('connection.deleted')).toEqual([connection]);
    expect(all.received.map((r) => r.body).join('\n')).not.toContain('never-in-an-event');

    await eventually(async () => narrow.received.length >= 1, 'the narrow webhook delivered');
    expect(messages(narrow).map((m) => m.type)).toEqual(['connection.created']);
    expect(off.received).toEqual([]);
  });

  it('quick setup announces the child, its new policy and its activation, once', async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    try {
      const family = (
        await call({ method: 'POST', url: '/api/v1/families', payload: { name: 'Quick' } }, 201)
      ).id;
      await subscribe(receiver.url, ['*'], family);
      const body = { family_id: family, child_name: 'Noor', birth_date: '2014-02-03' };
      const setup = await call({ method: 'POST', url: '/api/v1/setup/quick', payload: body }, 201);
      await eventually(async () => receiver.received.length >= 3, 'three events');
      const got = messages(receiver);
      expect(got.map((m) => m.type).sort()).toEqual([
        'child.created',
        'policy.activated',
        'policy.created',
      ]);
      expect(got.find((m) => m.type === 'child.created')?.data).toMatchObject({
        id: setup.child.id,
        family_id: family,
        name: 'Noor',
        birth_date: '2014-02-03T00:00:00.000Z',
      });
      expect(got.find((m) => m.type === 'policy.activated')?.data).toMatchObject({
        id: setup.policy.id,
        child_id: setup.child.id,
        status: 'active',
        version: 1,
      });

      // The same call again finds what the first made: nothing new to announce.
      await call({ method: 'POST', url: '/api/v1/setup/quick', payload: body }, 201);
      const delivered = await t.database.handle.db
        .selectFrom('webhook_deliveries')
        .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
        .select('webhook_deliveries.id')
        .where('webhooks.family_id', '=', family)
        .execute();
      expect(delivered).toHaveLength(3);
    } finally {
      await receiver.stop();
    }
  });
});
