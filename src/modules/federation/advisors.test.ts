import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createOrg, newSession, type Session } from '../../../test/identity.js';

function ed25519() {
  const { publicKey } = generateKeyPairSync('ed25519');
  return {
    b64url: publicKey.export({ format: 'jwk' }).x as string,
    pem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

async function trustListEntries(t: TestApp) {
  const envelope = (await t.app.inject({ url: '/.well-known/ocss/trust-list' })).json();
  return JSON.parse(envelope.document).entries as Array<{ did: string; tier: string }>;
}

describe('advisor self-registration', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  const register = (payload: unknown, url = '/api/v1/advisors/self-register') =>
    t.app.inject({ method: 'POST', url, payload: payload as object });

  it('answers 200 with the exact key_id the trust list publishes', async () => {
    const res = await register({
      did: 'did:ocss:acme-advisor',
      public_key_b64url: ed25519().b64url,
      roles: ['advisor', 'editor'],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      did: 'did:ocss:acme-advisor',
      tier: 'provisional',
      status: 'active',
      roles: ['advisor', 'editor'],
    });
    expect(body.key_id).toMatch(/^did:ocss:acme-advisor#[A-Za-z0-9_-]{43}$/);
    expect(new Date(body.registered_at).toISOString()).toBe(body.registered_at);
    const envelope = (await t.app.inject({ url: '/.well-known/ocss/trust-list' })).json();
    const entry = JSON.parse(envelope.document).entries.find(
      (e: { did: string }) => e.did === 'did:ocss:acme-advisor',
    );
    expect(`${entry.did}#${entry.jwks.signing_keys[0].kid}`).toBe(body.key_id);
  });

  it('refuses bad input with the contract messages', async () => {
    const key = ed25519().b64url;
    const cases: Array<[unknown, string]> = [
      [
        { did: 'did:web:example.com', public_key_b64url: key },
        'invalid_did: must start with did:ocss:',
      ],
      [
        { did: 'did:ocss:Upper', public_key_b64url: key },
        'invalid_did: the name after did:ocss: must be 1-64 characters of a-z 0-9 . _ -',
      ],
      [
        { did: `did:ocss:${'a'.repeat(65)}`, public_key_b64url: key },
        'invalid_did: the name after did:ocss: must be 1-64 characters of a-z 0-9 . _ -',
      ],
      [
        { did: 'did:ocss:short-key', public_key_b64url: Buffer.alloc(31, 1).toString('base64url') },
        'invalid_public_key_b64url: must decode to 32 bytes, got 31',
      ],
      [
        { did: 'did:ocss:long-key', public_key_b64url: Buffer.alloc(33, 1).toString('base64url') },
        'invalid_public_key_b64url: must decode to 32 bytes, got 33',
      ],
      [{ did: 'did:ocss:roles', public_key_b64url: key, roles: ['admin'] }, 'unknown_role: admin'],
      [{ public_key_b64url: key }, 'did is required'],
      [{ did: 'did:ocss:nokey' }, 'public_key_b64url is required'],
    ];
    for (const [payload, message] of cases) {
      const res = await register(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual({ error: 'Bad Request', message, code: 400 });
    }
  });

  it('is create-only: of two simultaneous registrations of one DID, one wins and one gets 409', async () => {
    const [a, b] = await Promise.all([
      register({ did: 'did:ocss:race', public_key_b64url: ed25519().b64url }),
      register({ did: 'did:ocss:race', public_key_b64url: ed25519().b64url }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 409]);
    const loser = a.statusCode === 409 ? a : b;
    expect(loser.json()).toMatchObject({ code: 409, message: 'did is already on the trust list' });
    expect(loser.json().class).toBeUndefined();
    // Seeded DIDs are taken too.
    const steward = await register({
      did: 'did:ocss:haven-steward',
      public_key_b64url: ed25519().b64url,
    });
    expect(steward.statusCode).toBe(409);
  });

  it('keeps the deprecated /advisors/register shim: same results, marked deprecated', async () => {
    const res = await register(
      { did: 'did:ocss:via-shim', public_key_b64url: ed25519().b64url },
      '/api/v1/advisors/register',
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ did: 'did:ocss:via-shim', tier: 'provisional' });
    const missing = await register(
      { public_key_b64url: ed25519().b64url },
      '/api/v1/advisors/register',
    );
    expect(missing.json()).toMatchObject({ code: 400, message: 'did is required' });
    const again = await register(
      { did: 'did:ocss:via-shim', public_key_b64url: ed25519().b64url },
      '/api/v1/advisors/register',
    );
    expect(again.statusCode).toBe(409);
    const openapi = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(openapi.paths['/api/v1/advisors/register'].post.deprecated).toBe(true);
    expect(openapi.paths['/api/v1/advisors/self-register'].post.deprecated).toBeUndefined();
  });
});

describe('org advisor registration', () => {
  let t: TestApp;
  let owner: Session;
  let orgId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await newSession(t.app);
    orgId = (await createOrg(t.app, owner)).id;
  });
  afterAll(() => t.close());

  const register = (payload: Record<string, unknown>, who: Session = owner, org = orgId) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/developers/orgs/${org}/advisors`,
      headers: who.auth,
      payload: {
        display_name: 'Acme Advisor',
        public_key_pem: ed25519().pem,
        key_id: 'key-1',
        scope: 'global',
        manifest_url: 'https://advisor.example/manifest.json',
        ...payload,
      },
    });

  it('registers did:ocss:<slug> as a provisional entry, keeping only provisional-band capabilities', async () => {
    const res = await register({
      slug: 'acme-lens',
      capability_domains: ['herald', 'verdict', 'lens', 'custody'],
      callback_url: 'https://advisor.example/verdicts',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      org_id: orgId,
      slug: 'acme-lens',
      did: 'did:ocss:acme-lens',
      display_name: 'Acme Advisor',
      scope: 'global',
      tier: 'provisional',
      status: 'active',
      capability_domains: ['herald', 'lens'],
      callback_url: 'https://advisor.example/verdicts',
    });
    expect(body.key_id).toMatch(/^did:ocss:acme-lens#[A-Za-z0-9_-]{43}$/);
    expect((await trustListEntries(t)).find((e) => e.did === 'did:ocss:acme-lens')).toMatchObject({
      tier: 'provisional',
    });
    const list = await t.app.inject({
      url: `/api/v1/developers/orgs/${orgId}/advisors`,
      headers: owner.auth,
    });
    expect(list.json().map((a: { slug: string }) => a.slug)).toEqual(['acme-lens']);
  });

  it('answers 409 for a taken slug (or a DID already listed) and writes nothing', async () => {
    const before = (await trustListEntries(t)).length;
    expect((await register({ slug: 'acme-lens' })).statusCode).toBe(409);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/advisors/self-register',
      payload: { did: 'did:ocss:self-made', public_key_b64url: ed25519().b64url },
    });
    const taken = await register({ slug: 'self-made' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toBe('slug is already registered');
    expect((await trustListEntries(t)).length).toBe(before + 1);
  });

  it('refuses what the contract refuses', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ slug: 'bad-pem', public_key_pem: 'nope' }, 400, 'invalid public_key_pem'],
      [{ slug: 'rsa-pem', public_key_pem: rsa }, 400, 'invalid public_key_pem'],
      [
        { slug: 'caps', capability_domains: ['herald', 'omniscience'] },
        400,
        'unknown_capability: omniscience',
      ],
      [{ slug: 'Bad Slug' }, 400, 'slug must be 1-64 characters of a-z 0-9 . _ -'],
      [
        { slug: 'no-manifest', manifest_url: null },
        400,
        'manifest_url is required when scope is global',
      ],
      [
        { slug: 'http-manifest', manifest_url: 'http://advisor.example/m.json' },
        400,
        'manifest_url must be an https URL when scope is global',
      ],
      [
        { slug: 'fam', scope: 'family', manifest_url: null },
        400,
        'scope_family_id is required when scope is family',
      ],
    ];
    for (const [payload, status, message] of cases) {
      const res = await register(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json().message).toBe(message);
      expect(res.json().class).toBeUndefined();
    }
  });

  it('scopes a family advisor to a family the caller belongs to', async () => {
    const family = await t.app.inject({
      method: 'POST',
      url: '/api/v1/families',
      headers: owner.auth,
      payload: { name: 'Advised' },
    });
    const ok = await register({
      slug: 'family-helper',
      scope: 'family',
      scope_family_id: family.json().id,
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().scope_family_id).toBe(family.json().id);
    const stranger = await newSession(t.app);
    const theirs = await t.app.inject({
      method: 'POST',
      url: '/api/v1/families',
      headers: stranger.auth,
      payload: { name: 'Not yours' },
    });
    const refused = await register({
      slug: 'intruder',
      scope: 'family',
      scope_family_id: theirs.json().id,
    });
    expect(refused.statusCode).toBe(403);
  });

  it('is for the org’s owners and admins only', async () => {
    const outsider = await newSession(t.app);
    const res = await register({ slug: 'outsider' }, outsider);
    expect(res.statusCode).toBe(404);
    const viaKeyless = await t.app.inject({
      method: 'GET',
      url: `/api/v1/developers/orgs/${orgId}/advisors`,
    });
    expect(viaKeyless.statusCode).toBe(401);
  });
});
