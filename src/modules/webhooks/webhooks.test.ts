import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, mintKey, newSession, type Session } from '../../../test/identity.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';

const WEBHOOK_FIELDS = [
  'id',
  'family_id',
  'url',
  'events',
  'active',
  'failing_since',
  'disabled_reason',
  'created_at',
  'updated_at',
].sort();

async function family(t: TestApp, auth: Record<string, string>, prefix = '/api/v1') {
  const res = await t.app.inject({
    method: 'POST',
    url: `${prefix}/families`,
    headers: auth,
    payload: { name: 'Hooked' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

describe('webhooks: registration and management (sandbox)', () => {
  let t: TestApp;
  let parent: Session;
  let familyId: string;
  const create = (body: object, who: Record<string, string> = parent.auth, prefix = '/api/v1') =>
    t.app.inject({ method: 'POST', url: `${prefix}/webhooks`, headers: who, payload: body });

  beforeAll(async () => {
    t = await buildTestApp();
    parent = await newSession(t.app);
    familyId = await family(t, parent.auth);
  });
  afterAll(() => t.close());

  it('shows the whsec_ secret once and keeps it only sealed: not in reads, the row or the logs', async () => {
    const res = await create({
      family_id: familyId,
      url: 'https://hooks.example/haven',
      events: ['child.created', 'policy.activated'],
    });
    expect(res.statusCode, res.body).toBe(201);
    const { secret, ...webhook } = res.json();
    expect(Object.keys(webhook).sort()).toEqual(WEBHOOK_FIELDS);
    expect(webhook).toMatchObject({
      family_id: familyId,
      url: 'https://hooks.example/haven',
      events: ['child.created', 'policy.activated'],
      active: true,
      failing_since: null,
      disabled_reason: null,
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(key).toHaveLength(24);

    const read = await t.app.inject({
      url: `/api/v1/webhooks/${webhook.id}`,
      headers: parent.auth,
    });
    expect(read.json()).toEqual(webhook);
    const list = await t.app.inject({ url: '/api/v1/webhooks', headers: parent.auth });
    expect(list.body).not.toContain(secret.slice(6));

    const row = await t.database.handle.db
      .selectFrom('webhooks')
      .select(['secret', 'secret_key_id'])
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    const stored = Buffer.from(row.secret);
    expect(stored.includes(Buffer.from(secret))).toBe(false);
    expect(stored.includes(Buffer.from(secret.slice(6)))).toBe(false);
    expect(stored.includes(key)).toBe(false);
    expect(row.secret_key_id).toMatch(/^[0-9a-f]{16}$/);
    expect(t.rawLogs.join('\n')).not.toContain(secret.slice(6));
  });

  it('takes known event types (each once) or ["*"] alone; names what it refuses', async () => {
    const url = 'http://127.0.0.1:9/hooks';
    const refused = async (events: unknown, message: string) => {
      const res = await create({ family_id: familyId, url, events });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().message).toBe(message);
    };
    await refused([], 'events must not be empty');
    await refused(['child.created', 'child.exploded'], 'unknown event type: child.exploded');
    await refused(
      ['*', 'child.created'],
      '"*" (every event) cannot be combined with other event types',
    );
    await refused('child.created', 'events must be an array');
    const missing = await create({ family_id: familyId, url });
    expect(missing.json().message).toBe('events is required');

    const all = await create({ family_id: familyId, url, events: ['*'] });
    expect(all.statusCode).toBe(201);
    expect(all.json().events).toEqual(['*']);
    const twice = await create({
      family_id: familyId,
      url,
      events: ['device.report', 'test', 'device.report'],
    });
    expect(twice.json().events).toEqual(['device.report', 'test']);
  });

  it('takes absolute http(s) URLs only (in the sandbox, http and local addresses too)', async () => {
    for (const url of ['ftp://files.example/x', 'not a url', '/relative/path']) {
      const res = await create({ family_id: familyId, url, events: ['test'] });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toBe('url must be an absolute http(s) URL');
    }
    const local = await create({
      family_id: familyId,
      url: 'http://localhost:3000/hooks',
      events: ['test'],
    });
    expect(local.statusCode).toBe(201);
  });

  it('lists the webhooks of every family the caller reads, newest first; ?family_id= narrows it', async () => {
    const other = await family(t, parent.auth);
    t.clock.advance(1000);
    const created = await create({
      family_id: other,
      url: 'https://b.example/h',
      events: ['test'],
    });
    const all = await t.app.inject({ url: '/api/v1/webhooks', headers: parent.auth });
    expect(all.statusCode).toBe(200);
    const ids = all.json().map((w: { id: string }) => w.id);
    expect(ids[0]).toBe(created.json().id);
    expect(all.json().every((w: object) => !('secret' in w))).toBe(true);
    expect(new Set(all.json().map((w: { family_id: string }) => w.family_id))).toEqual(
      new Set([familyId, other]),
    );

    const narrowed = await t.app.inject({
      url: `/api/v1/webhooks?family_id=${other}`,
      headers: parent.auth,
    });
    expect(narrowed.json().map((w: { id: string }) => w.id)).toEqual([created.json().id]);
    const bad = await t.app.inject({
      url: '/api/v1/webhooks?family_id=nope',
      headers: parent.auth,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('invalid family ID');
    const unknown = await t.app.inject({
      url: `/api/v1/webhooks?family_id=${randomUUID()}`,
      headers: parent.auth,
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('PATCH changes url, events and active; re-enabling clears the failure record', async () => {
    const { id } = (
      await create({ family_id: familyId, url: 'https://c.example/h', events: ['test'] })
    ).json();
    const patch = (payload: object) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/v1/webhooks/${id}`,
        headers: parent.auth,
        payload,
      });

    const changed = await patch({ url: 'https://d.example/h', events: ['child.updated'] });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ url: 'https://d.example/h', events: ['child.updated'] });
    expect((await patch({ events: ['nope'] })).json().message).toBe('unknown event type: nope');
    expect((await patch({ url: 'gopher://x' })).statusCode).toBe(400);

    // As the delivery worker leaves an endpoint it disabled.
    await t.database.handle.db
      .updateTable('webhooks')
      .set({ active: false, failing_since: new Date('2026-01-01T00:00:00Z'), disabled_reason: 'x' })
      .where('id', '=', id)
      .execute();
    const enabled = await patch({ active: true });
    expect(enabled.json()).toMatchObject({
      active: true,
      failing_since: null,
      disabled_reason: null,
    });
    expect((await patch({ active: false })).json().active).toBe(false);
  });

  it('DELETE removes the webhook and its delivery records', async () => {
    const { id } = (
      await create({ family_id: familyId, url: 'http://127.0.0.1:9/h', events: ['test'] })
    ).json();
    const test = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${id}/test`,
      headers: parent.auth,
    });
    expect(test.statusCode).toBe(202);
    const gone = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${id}`,
      headers: parent.auth,
    });
    expect(gone.statusCode).toBe(204);
    const read = await t.app.inject({ url: `/api/v1/webhooks/${id}`, headers: parent.auth });
    expect(read.statusCode).toBe(404);
    const left = await t.database.handle.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', id)
      .execute();
    expect(left).toEqual([]);
    expect(read.json().message).toBe('webhook not found');
    const malformed = await t.app.inject({ url: '/api/v1/webhooks/123', headers: parent.auth });
    expect(malformed.json().message).toBe('invalid webhook ID');
  });

  it('lists deliveries newest first: limit 50 by default, more than 100 clamped to 100', async () => {
    const { id } = (
      await create({ family_id: familyId, url: 'http://127.0.0.1:9/h', events: ['test'] })
    ).json();
    // Rows as the worker leaves them (120 attempts would take 120 real deliveries).
    const base = t.clock.now().getTime();
    await t.database.handle.db
      .insertInto('webhook_deliveries')
      .values(
        Array.from({ length: 120 }, (_, i) => ({
          id: randomUUID(),
          webhook_id: id,
          message_id: `msg_${i}`,
          event: 'test',
          payload: '{}',
          status: 'succeeded' as const,
          response_code: 200,
          error: null,
          attempt: 1,
          next_retry_at: null,
          created_at: new Date(base + i * 1000),
          attempted_at: new Date(base + i * 1000),
        })),
      )
      .execute();
    const page = (query = '') =>
      t.app.inject({ url: `/api/v1/webhooks/${id}/deliveries${query}`, headers: parent.auth });
    const first = await page();
    expect(first.statusCode).toBe(200);
    expect(first.json()).toHaveLength(50);
    expect(first.json()[0]).toMatchObject({ message_id: 'msg_119', webhook_id: id });
    expect(Object.keys(first.json()[0]).sort()).toEqual(
      [
        'id',
        'webhook_id',
        'message_id',
        'event',
        'status',
        'response_code',
        'error',
        'attempt',
        'next_retry_at',
        'created_at',
        'attempted_at',
      ].sort(),
    );
    expect((await page('?limit=500')).json()).toHaveLength(100);
    expect(
      (await page('?limit=3')).json().map((d: { message_id: string }) => d.message_id),
    ).toEqual(['msg_119', 'msg_118', 'msg_117']);
    expect((await page('?limit=0')).statusCode).toBe(400);
  });

  it('keeps tenants apart: another org’s key gets 404, another user 403, a guardian cannot write', async () => {
    const { id } = (
      await create({ family_id: familyId, url: 'https://e.example/h', events: ['test'] })
    ).json();
    const owner = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    const key = await mintKey(t.app, owner, org.id);
    for (const url of [
      `/api/v1/developer/webhooks/${id}`,
      `/api/v1/developer/webhooks/${id}/deliveries`,
    ]) {
      const res = await t.app.inject({ url, headers: bearer(key.key) });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().message).toBe('webhook not found');
    }
    const foreignList = await t.app.inject({
      url: '/api/v1/developer/webhooks',
      headers: bearer(key.key),
    });
    expect(foreignList.json()).toEqual([]);

    const stranger = await newSession(t.app);
    const read = await t.app.inject({ url: `/api/v1/webhooks/${id}`, headers: stranger.auth });
    expect(read.statusCode).toBe(403);
    const wrote = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${id}`,
      headers: stranger.auth,
    });
    expect(wrote.statusCode).toBe(403);
    const intoOthers = await create(
      { family_id: familyId, url: 'https://f.example', events: ['test'] },
      stranger.auth,
    );
    expect(intoOthers.statusCode).toBe(403);

    await t.app.inject({
      method: 'POST',
      url: `/api/v1/families/${familyId}/members`,
      headers: parent.auth,
      payload: { user_id: stranger.userId, role: 'guardian' },
    });
    expect(
      (await t.app.inject({ url: `/api/v1/webhooks/${id}`, headers: stranger.auth })).statusCode,
    ).toBe(200);
    const guarded = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${id}`,
      headers: stranger.auth,
      payload: { active: false },
    });
    expect(guarded.statusCode).toBe(403);
    expect(guarded.json().message).toBe('insufficient role for this action');
  });

  it('refuses the demo family, which never changes: 403 "demo family is read-only" for every caller', async () => {
    const owner = await newSession(t.app);
    const key = await mintKey(t.app, owner, (await createOrg(t.app, owner)).id);
    const token = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: parent.auth,
      payload: { family_id: DEMO_FAMILY_ID, label: 'demo' },
    });
    expect(token.statusCode, token.body).toBe(201);
    const body = { family_id: DEMO_FAMILY_ID, url: 'https://demo.example/h', events: ['*'] };
    for (const [who, prefix] of [
      [parent.auth, '/api/v1'],
      [{ 'x-sandbox-session': 'demo-hooks' }, '/api/v1'],
      [bearer(token.json().plain), '/api/v1'],
      [bearer(key.key), '/api/v1/developer'],
    ] as const) {
      const res = await create(body, who, prefix);
      expect({ who, status: res.statusCode, body: res.json() }).toEqual({
        who,
        status: 403,
        body: { error: 'Forbidden', message: 'demo family is read-only', code: 403 },
      });
    }
    const hooks = await t.database.handle.db
      .selectFrom('webhooks')
      .select('id')
      .where('family_id', '=', DEMO_FAMILY_ID)
      .execute();
    expect(hooks).toEqual([]);
  });

  it('serves API keys under /api/v1/developer with read:webhooks / write:webhooks', async () => {
    const owner = await newSession(t.app);
    const org = await createOrg(t.app, owner);
    const full = await mintKey(t.app, owner, org.id);
    const readOnly = await mintKey(t.app, owner, org.id, { scopes: ['read:webhooks'] });
    const orgFamily = await family(t, bearer(full.key), '/api/v1/developer');
    const body = { family_id: orgFamily, url: 'https://g.example/h', events: ['test'] };
    const refused = await create(body, bearer(readOnly.key), '/api/v1/developer');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toContain('write:webhooks');
    const made = await create(body, bearer(full.key), '/api/v1/developer');
    expect(made.statusCode).toBe(201);
    const listed = await t.app.inject({
      url: '/api/v1/developer/webhooks',
      headers: bearer(readOnly.key),
    });
    expect(listed.json().map((w: { id: string }) => w.id)).toEqual([made.json().id]);
  });
});
