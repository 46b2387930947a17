import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { newSession, type Session } from '../../../test/identity.js';
import { JwksServer, newSigningKey, signSession } from '../../../test/jwks-server.js';
import { productionEnv } from '../../../test/production.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { DEMO_CHILDREN, DEMO_FAMILY_ID } from '../demo/demo-family.js';
import { createCredentialCipher } from './credential-cipher.js';

const SECRET = 'nextdns-api-key-7f3a9c1e';
const SANDBOX_PROVIDER = 'did:ocss:sandbox-provider';

async function family(t: TestApp, who: Session): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/families',
    headers: who.auth,
    payload: { name: 'Connected' },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

/** A code from the sandbox provider's consent flow, as the parent's browser would get it. */
async function authorizationCode(t: TestApp, account?: string): Promise<string> {
  const query = new URLSearchParams({
    redirect_uri: 'https://app.example/callback',
    state: 's1',
    decision: 'approve',
    ...(account ? { account } : {}),
  });
  const res = await t.app.inject({ url: `/oauth/authorize?${query}` });
  expect(res.statusCode).toBe(302);
  const code = new URL(res.headers.location as string).searchParams.get('code');
  expect(code).toMatch(/^sbxauth_/);
  return code as string;
}

describe('family connections (sandbox)', () => {
  let t: TestApp;
  let parent: Session;
  let familyId: string;
  const connect = (body: unknown, who: Session = parent, id = familyId) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/families/${id}/connections`,
      headers: who.auth,
      payload: body as object,
    });

  beforeAll(async () => {
    t = await buildTestApp();
    parent = await newSession(t.app);
    familyId = await family(t, parent);
  });
  afterAll(() => t.close());

  it('connects a catalog platform and seals its credentials: never returned, never logged, not in the row', async () => {
    const res = await connect({
      platform_id: 'nextdns',
      credentials: { api_key: SECRET, profile_id: 'abc123' },
    });
    expect(res.statusCode).toBe(201);
    const connection = res.json();
    expect(connection).toMatchObject({
      family_id: familyId,
      platform_id: 'nextdns',
      status: 'connected',
      has_credentials: true,
      profiles: [],
      last_enforcement_at: null,
      last_enforcement_status: null,
    });
    expect(Object.keys(connection).sort()).toEqual(
      [
        'id',
        'family_id',
        'platform_id',
        'status',
        'has_credentials',
        'profiles',
        'created_at',
        'updated_at',
        'last_enforcement_at',
        'last_enforcement_status',
      ].sort(),
    );
    const list = await t.app.inject({
      url: `/api/v1/families/${familyId}/connections`,
      headers: parent.auth,
    });
    expect(list.json().map((c: { id: string }) => c.id)).toEqual([connection.id]);
    for (const text of [res.body, list.body, ...t.rawLogs]) {
      expect(text).not.toContain(SECRET);
    }
    // At rest: ciphertext without the secret, opened only with the deployment's key and
    // only for this connection's row.
    const row = await t.database.handle.db
      .selectFrom('family_connections')
      .select(['credentials', 'credentials_key_id'])
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    const sealed = {
      sealed: Buffer.from(row.credentials as Buffer),
      keyId: row.credentials_key_id as string,
    };
    expect(sealed.sealed.toString('latin1')).not.toContain(SECRET);
    const cipher = createCredentialCipher([
      await loadServiceSecret(t.database.handle.db, 'credentials-key'),
    ]);
    expect(cipher.open(sealed, connection.id)).toEqual({ api_key: SECRET, profile_id: 'abc123' });
    expect(() => cipher.open(sealed, familyId)).toThrow();
  });

  it('accepts any platform_id: an unknown one is pending', async () => {
    const res = await connect({ platform_id: 'acme-router-9000' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 'pending', has_credentials: false });
    // In the sandbox, catalog adapters need no secret.
    const dns = await connect({ platform_id: 'cleanbrowsing' });
    expect(dns.json()).toMatchObject({ status: 'connected', has_credentials: false });
  });

  it('refuses a second connection to the same platform with 409', async () => {
    const again = await connect({ platform_id: 'nextdns' });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('this platform is already connected to the family');
  });

  it('names the field of a bad body', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'platform_id is required'],
      [
        { platform_id: '' },
        "platform_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'",
      ],
      [
        { platform_id: 'has space' },
        "platform_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'",
      ],
      [{ platform_id: 'x', credentials: 'key' }, 'credentials must be an object'],
      [{ platform_id: 'x', credentials: { api_key: 5 } }, 'credentials.api_key must be a string'],
      [{ platform_id: 'x', authorization_code: 7 }, 'authorization_code must be a string'],
    ];
    for (const [body, message] of cases) {
      const res = await connect(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toBe(message);
    }
    const bad = await t.app.inject({
      url: '/api/v1/families/nope/connections',
      headers: parent.auth,
    });
    expect(bad.json()).toMatchObject({ code: 400, message: 'invalid family ID' });
  });

  it('completes a sandbox-provider connection with an authorization code, linking the demo children', async () => {
    const res = await connect({
      platform_id: SANDBOX_PROVIDER,
      authorization_code: await authorizationCode(t),
    });
    expect(res.statusCode).toBe(201);
    const connection = res.json();
    expect(connection).toMatchObject({
      platform_id: SANDBOX_PROVIDER,
      status: 'connected',
      has_credentials: true,
    });
    expect(connection.profiles.map((p: { subject_ref: string }) => p.subject_ref).sort()).toEqual(
      DEMO_CHILDREN.map((child) => child.id).sort(),
    );
    for (const profile of connection.profiles) {
      expect(profile).toMatchObject({ kind: 'child' });
      expect(profile.id).not.toBe('');
    }
    const listed = await t.app.inject({
      url: `/api/v1/families/${familyId}/connections`,
      headers: parent.auth,
    });
    const fromList = listed.json().find((c: { id: string }) => c.id === connection.id);
    expect(fromList.profiles).toEqual(connection.profiles);
  });

  it('links no profiles for the no-children account, and refuses bad codes', async () => {
    const other = await family(t, parent);
    const empty = await connect(
      {
        platform_id: SANDBOX_PROVIDER,
        authorization_code: await authorizationCode(t, 'no-children'),
      },
      parent,
      other,
    );
    expect(empty.statusCode).toBe(201);
    expect(empty.json().profiles).toEqual([]);

    const third = await family(t, parent);
    const forged = await connect(
      { platform_id: SANDBOX_PROVIDER, authorization_code: 'sbxauth_forged' },
      parent,
      third,
    );
    expect(forged.statusCode).toBe(400);
    expect(forged.json().message).toBe('authorization_code is invalid or expired');
    const code = await authorizationCode(t);
    t.clock.advance(10 * 60_000 + 1_000);
    const expired = await connect(
      { platform_id: SANDBOX_PROVIDER, authorization_code: code },
      parent,
      third,
    );
    expect(expired.json().message).toBe('authorization_code is invalid or expired');
    const wrongPlatform = await connect(
      { platform_id: 'nextdns', authorization_code: await authorizationCode(t) },
      parent,
      third,
    );
    expect(wrongPlatform.statusCode).toBe(400);
    expect(wrongPlatform.json().message).toBe(
      'authorization_code is accepted only for did:ocss:sandbox-provider on a sandbox deployment',
    );
    // Nothing was written by the refusals.
    const list = await t.app.inject({
      url: `/api/v1/families/${third}/connections`,
      headers: parent.auth,
    });
    expect(list.json()).toEqual([]);
  });

  it('deletes a connection; non-members get 403, the demo family is read-only', async () => {
    const made = (await connect({ platform_id: 'roblox' })).json();
    const stranger = await newSession(t.app);
    const refused = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/connections/${made.id}`,
      headers: stranger.auth,
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('not a member of this family');
    const strangerList = await t.app.inject({
      url: `/api/v1/families/${familyId}/connections`,
      headers: stranger.auth,
    });
    expect(strangerList.statusCode).toBe(403);

    const gone = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/connections/${made.id}`,
      headers: parent.auth,
    });
    expect(gone.statusCode).toBe(204);
    const again = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/connections/${made.id}`,
      headers: parent.auth,
    });
    expect(again.statusCode).toBe(404);
    expect(again.json().message).toBe('connection not found');

    const demo = await connect({ platform_id: 'nextdns' }, stranger, DEMO_FAMILY_ID);
    expect(demo.statusCode).toBe(403);
    expect(demo.json().message).toBe('demo family is read-only');
  });

  it('go with their family', async () => {
    const doomed = await family(t, parent);
    const made = (
      await connect(
        { platform_id: 'nextdns', credentials: { api_key: 'k', profile_id: 'abc123' } },
        parent,
        doomed,
      )
    ).json();
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/families/${doomed}`,
      headers: parent.auth,
    });
    expect(removed.statusCode).toBe(204);
    const rows = await t.database.handle.db
      .selectFrom('family_connections')
      .select('id')
      .where('id', '=', made.id)
      .execute();
    expect(rows).toEqual([]);
  });
});

describe('provider connect config', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://sandbox.haven.example' } });
  });
  afterAll(() => t.close());

  it('serves the sandbox provider, with URLs on PUBLIC_BASE_URL', async () => {
    const res = await t.app.inject({ url: `/api/v1/providers/${SANDBOX_PROVIDER}/connect` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      did: SANDBOX_PROVIDER,
      name: 'Haven Sandbox Provider',
      authorize_url: 'https://sandbox.haven.example/oauth/authorize',
      token_url: 'https://sandbox.haven.example/oauth/token',
      profiles_url: 'https://sandbox.haven.example/oauth/profiles',
      scopes: ['child_profiles.read'],
    });
  });

  it('answers 404 with distinct messages for an unconfigured and an unknown provider', async () => {
    const unconfigured = await t.app.inject({
      url: '/api/v1/providers/did:ocss:sandbox-unconfigured-provider/connect',
    });
    expect(unconfigured.statusCode).toBe(404);
    expect(unconfigured.json()).toEqual({
      error: 'Not Found',
      message: 'provider connect config not available',
      code: 404,
    });
    const unknown = await t.app.inject({ url: '/api/v1/providers/did:ocss:nobody/connect' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('provider not found');
  });
});

describe('connections in production', () => {
  const jwks = new JwksServer();
  const ISS = 'https://id.example.test/';
  let key: Awaited<ReturnType<typeof newSigningKey>>;
  beforeAll(async () => {
    await jwks.start();
    key = await newSigningKey('prod-conn');
    jwks.keys.push(key.jwk);
  });
  afterAll(() => jwks.stop());

  async function productionApp(extra: Record<string, string> = {}) {
    const t = await buildTestApp({
      env: { ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }), ...extra },
    });
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    const token = await signSession(key, {
      iss: ISS,
      sub: `user-${Math.random()}`,
      iat,
      exp: iat + 3600,
    });
    const who: Session = { token, userId: '', auth: { authorization: `Bearer ${token}` } };
    return { t, who, familyId: await family(t, who) };
  }

  it('keeps a platform that needs credentials pending without them, and refuses sandbox-only providers', async () => {
    const { t, who, familyId } = await productionApp();
    try {
      const post = (body: object) =>
        t.app.inject({
          method: 'POST',
          url: `/api/v1/families/${familyId}/connections`,
          headers: who.auth,
          payload: body,
        });
      expect((await post({ platform_id: 'nextdns' })).json()).toMatchObject({ status: 'pending' });
      const sandboxOnly = await post({
        platform_id: SANDBOX_PROVIDER,
        authorization_code: 'sbxauth_x',
      });
      expect(sandboxOnly.statusCode).toBe(400);
      const provider = await t.app.inject({ url: `/api/v1/providers/${SANDBOX_PROVIDER}/connect` });
      expect(provider.json().message).toBe('provider not found');
    } finally {
      await t.close();
    }
  });

  it('seals credentials with CREDENTIALS_KEY', async () => {
    const configured = Buffer.alloc(32, 7);
    const { t, who, familyId } = await productionApp({
      CREDENTIALS_KEY: configured.toString('base64'),
    });
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/families/${familyId}/connections`,
        headers: who.auth,
        // A platform without a live adapter: nothing to ask a partner (live-enforcement.test.ts
        // covers the partners' checks).
        payload: { platform_id: 'cleanbrowsing', credentials: { api_key: SECRET } },
      });
      expect(res.json()).toMatchObject({ status: 'connected', has_credentials: true });
      const row = await t.database.handle.db
        .selectFrom('family_connections')
        .select(['credentials', 'credentials_key_id'])
        .executeTakeFirstOrThrow();
      const opened = createCredentialCipher([configured]).open(
        { sealed: Buffer.from(row.credentials as Buffer), keyId: row.credentials_key_id as string },
        res.json().id,
      );
      expect(opened).toEqual({ api_key: SECRET });
    } finally {
      await t.close();
    }
  });
});
