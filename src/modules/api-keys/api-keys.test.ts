import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, mintKey, newSession, type Session } from '../../../test/identity.js';
import { hashSecret } from '../../auth/secrets.js';

describe('developer API keys', () => {
  let t: TestApp;
  let owner: Session;
  let orgId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await newSession(t.app);
    orgId = (await createOrg(t.app, owner)).id;
  });
  afterAll(async () => t.close());

  const keysUrl = () => `/api/v1/developers/orgs/${orgId}/keys`;
  const familiesWith = (secret: string) =>
    t.app.inject({ url: '/api/v1/developer/families', headers: bearer(secret) });

  it('shows the secret once and stores only its SHA-256', async () => {
    const key = await mintKey(t.app, owner, orgId, { name: 'backend', scopes: ['read:families'] });
    expect(key.key).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);
    expect(key.key_prefix).toBe(key.key.slice(0, 'svc_test_'.length + 8));
    expect(key).toMatchObject({
      environment: 'test',
      scopes: ['read:families'],
      revoked_at: null,
      last_used_ip: null,
    });

    const listed = (await t.app.inject({ url: keysUrl(), headers: owner.auth })).json();
    const row = listed.find((k: { id: string }) => k.id === key.id);
    expect(row).toBeDefined();
    expect(row.key).toBeUndefined();
    expect(JSON.stringify(listed)).not.toContain(key.key);

    const stored = await t.database.handle.db
      .selectFrom('developer_api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(stored.key_hash).toBe(hashSecret(key.key));
    expect(JSON.stringify(stored)).not.toContain(key.key.slice('svc_test_'.length));
  });

  it('lists newest first, revoked keys included', async () => {
    const first = await mintKey(t.app, owner, orgId, { name: 'first' });
    t.clock.advance(1_000);
    const second = await mintKey(t.app, owner, orgId, { name: 'second' });
    await t.app.inject({ method: 'DELETE', url: `${keysUrl()}/${first.id}`, headers: owner.auth });
    const ids = (await t.app.inject({ url: keysUrl(), headers: owner.auth }))
      .json()
      .map((k: { id: string }) => k.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    expect(ids).toContain(first.id);
  });

  it('validates creation: environment, scopes, expiry, name', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ name: 'k', environment: 'prod' }, 400, "environment must be 'live' or 'test'"],
      [{ name: 'k' }, 400, 'environment is required'],
      [{ environment: 'test' }, 400, 'name is required'],
      [
        { name: 'k', environment: 'test', scopes: ['read:families', 'admin:all'] },
        400,
        'invalid scope requested: admin:all',
      ],
      [{ name: 'k', environment: 'test', scopes: 'read:families' }, 400, 'scopes must be an array'],
      [
        { name: 'k', environment: 'test', expires_at: 'tomorrow' },
        400,
        'expires_at must be a valid date-time',
      ],
      [
        { name: 'k', environment: 'test', expires_at: '2000-01-01T00:00:00Z' },
        422,
        'expires_at must be in the future',
      ],
    ];
    for (const [payload, status, message] of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: keysUrl(),
        headers: owner.auth,
        payload,
      });
      expect({ payload, status: res.statusCode, message: res.json().message }).toEqual({
        payload,
        status,
        message,
      });
    }
  });

  it('revokes: 204, again 204, and the key is dead at once', async () => {
    const key = await mintKey(t.app, owner, orgId);
    expect((await familiesWith(key.key)).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'DELETE',
        url: `${keysUrl()}/${key.id}`,
        headers: owner.auth,
      });
      expect(res.statusCode).toBe(204);
    }
    expect((await familiesWith(key.key)).json()).toMatchObject({
      code: 401,
      message: 'API key has been revoked',
    });
    const missing = await t.app.inject({
      method: 'DELETE',
      url: `${keysUrl()}/00000000-0000-4000-8000-000000000000`,
      headers: owner.auth,
    });
    expect(missing.statusCode).toBe(404);
    const malformed = await t.app.inject({
      method: 'DELETE',
      url: `${keysUrl()}/nope`,
      headers: owner.auth,
    });
    expect(malformed.json().message).toBe('invalid key ID');
  });

  it('regenerates: a new key with the same settings, the old one revoked in the same step', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const old = await mintKey(t.app, owner, orgId, {
      name: 'rotating',
      scopes: ['read:families'],
      expires_at: expiresAt,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: `${keysUrl()}/${old.id}/regenerate`,
      headers: owner.auth,
    });
    expect(res.statusCode).toBe(201);
    const fresh = res.json();
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.key).not.toBe(old.key);
    expect(fresh).toMatchObject({
      name: 'rotating',
      environment: 'test',
      scopes: ['read:families'],
      expires_at: expiresAt,
    });
    expect((await familiesWith(fresh.key)).statusCode).toBe(200);
    expect((await familiesWith(old.key)).json().message).toBe('API key has been revoked');
    const again = await t.app.inject({
      method: 'POST',
      url: `${keysUrl()}/${old.id}/regenerate`,
      headers: owner.auth,
    });
    expect(again.statusCode).toBe(409);
  });

  it('rotates without downtime: two keys overlap, then the old one is deleted (spec rule 7)', async () => {
    const old = await mintKey(t.app, owner, orgId, { scopes: ['read:families', 'write:families'] });
    const next = await mintKey(t.app, owner, orgId, { scopes: old.scopes });
    expect((await familiesWith(old.key)).statusCode).toBe(200);
    expect((await familiesWith(next.key)).statusCode).toBe(200);
    await t.app.inject({ method: 'DELETE', url: `${keysUrl()}/${old.id}`, headers: owner.auth });
    expect((await familiesWith(old.key)).statusCode).toBe(401);
    expect((await familiesWith(next.key)).statusCode).toBe(200);
  });

  it('never reveals another org’s keys', async () => {
    const stranger = await newSession(t.app);
    const theirs = await createOrg(t.app, stranger, 'Theirs');
    const key = await mintKey(t.app, stranger, theirs.id);
    const peek = await t.app.inject({
      url: `/api/v1/developers/orgs/${theirs.id}/keys`,
      headers: owner.auth,
    });
    expect(peek.statusCode).toBe(404);
    const kill = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/developers/orgs/${orgId}/keys/${key.id}`,
      headers: owner.auth,
    });
    expect(kill.statusCode).toBe(404);
    expect((await familiesWith(key.key)).statusCode).toBe(200);
  });

  it('leaves no secret in the logs', async () => {
    const key = await mintKey(t.app, owner, orgId);
    await familiesWith(key.key);
    for (const secret of [key.key, owner.token]) {
      expect(t.rawLogs.some((line) => line.includes(secret))).toBe(false);
    }
  });
});
