// CONTRACT.md §12.1 on the control plane: every write to an org (its creation, members, keys,
// advisors, an operator's tier change) states exactly one entry on the org's chain, read by
// its owners and admins only; writes that touch no family and no org state none
// (docs/decisions.md "Control-plane writes without a chain").
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, mintKey, newSession, type Session } from '../../../test/identity.js';
import { signedRequest } from '../../../test/ocss-signer.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { changeTrustListEntry } from '../federation/advisors-service.js';
import { createOrgsService } from '../orgs/service.js';
import { createUsersService } from '../users/service.js';
import { createAuditedWrites } from './audited-writes.js';

interface Entry {
  seq: number;
  family_id: string | null;
  org_id: string | null;
  actor: { type: string; id: string; label: string };
  action: string;
  target: { type: string; id: string };
  request_id: string | null;
  changes: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** What one write should have put on the chain. */
interface Expected {
  action: string;
  target: { type: string; id: string };
  actor: { type: string; id: string; label: string };
  request_id: string | null;
  changes: Record<string, unknown>;
}

type Response = Awaited<ReturnType<TestApp['app']['inject']>>;

describe('the control plane in the org audit log', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const as =
    (session: Session) =>
    (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object): Promise<Response> =>
      t.app.inject({
        method,
        url: `/api/v1${url}`,
        headers: session.auth,
        ...(payload ? { payload } : {}),
      });

  /** The org's chain, oldest first. */
  async function orgChain(session: Session, orgId: string): Promise<Entry[]> {
    const res = await as(session)('GET', `/developers/orgs/${orgId}/audit-log?limit=200`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().entries as Entry[]).reverse();
  }

  async function auditRowCount(): Promise<number> {
    const { rows } = await sql<{
      n: string | number;
    }>`select count(*) as n from audit_entries`.execute(t.database.handle.db);
    return Number(rows[0]?.n);
  }

  const requestIdOf = (res: Response) => res.headers['x-request-id'] as string;

  it('states one entry per write on the org chain: who, what, which request, no personal value', async () => {
    const owner = await newSession(t.app);
    const admin = await newSession(t.app);
    const member = await newSession(t.app);
    const leaver = await newSession(t.app);
    const expected: Expected[] = [];
    const byUser = (session: Session, label: string) => ({
      type: 'user',
      id: session.userId,
      label,
    });

    const created = await as(owner)('POST', '/developers/orgs', {
      name: 'Acme Kids',
      description: 'Run by Jane Roe from her kitchen',
      website_url: 'https://jane-roe.example',
    });
    expect(created.statusCode, created.body).toBe(201);
    const org = created.json() as { id: string; slug: string };
    expected.push({
      action: 'org.created',
      target: { type: 'org', id: org.id },
      actor: byUser(owner, 'owner'),
      request_id: requestIdOf(created),
      changes: {
        name: 'Acme Kids',
        slug: org.slug,
        description: '[redacted]',
        website_url: '[redacted]',
        tier: 'free',
        rate_limit_rpm: 100,
      },
    });

    const addAs = async (by: Session, label: string, who: Session, role: string) => {
      const res = await as(by)('POST', `/developers/orgs/${org.id}/members`, {
        user_id: who.userId,
        role,
      });
      expect(res.statusCode, res.body).toBe(201);
      expected.push({
        action: 'org_member.added',
        target: { type: 'user', id: who.userId },
        actor: byUser(by, label),
        request_id: requestIdOf(res),
        changes: { role },
      });
    };
    await addAs(owner, 'owner', admin, 'admin');
    await addAs(admin, 'admin', member, 'member');
    await addAs(admin, 'admin', leaver, 'member');
    // Refused writes change nothing and state nothing.
    const again = await as(admin)('POST', `/developers/orgs/${org.id}/members`, {
      user_id: member.userId,
      role: 'member',
    });
    expect(again.statusCode).toBe(409);
    const notAllowed = await as(member)('POST', `/developers/orgs/${org.id}/members`, {
      user_id: owner.userId,
      role: 'admin',
    });
    expect(notAllowed.statusCode).toBe(403);

    const expiresAt = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const minted = await as(admin)('POST', `/developers/orgs/${org.id}/keys`, {
      name: 'server',
      environment: 'test',
      scopes: ['read:families', 'write:children'],
      expires_at: expiresAt,
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const key = minted.json();
    const settings = {
      name: 'server',
      environment: 'test',
      scopes: ['read:families', 'write:children'],
      expires_at: expiresAt,
    };
    expected.push({
      action: 'api_key.created',
      target: { type: 'api_key', id: key.id },
      actor: byUser(admin, 'admin'),
      request_id: requestIdOf(minted),
      changes: { ...settings, key_prefix: key.key_prefix },
    });

    const regenerated = await as(owner)(
      'POST',
      `/developers/orgs/${org.id}/keys/${key.id}/regenerate`,
    );
    expect(regenerated.statusCode, regenerated.body).toBe(201);
    const fresh = regenerated.json();
    expected.push({
      action: 'api_key.regenerated',
      target: { type: 'api_key', id: fresh.id },
      actor: byUser(owner, 'owner'),
      request_id: requestIdOf(regenerated),
      changes: { replaces: key.id, ...settings, key_prefix: fresh.key_prefix },
    });

    const revoked = await as(owner)('DELETE', `/developers/orgs/${org.id}/keys/${fresh.id}`);
    expect(revoked.statusCode).toBe(204);
    expected.push({
      action: 'api_key.revoked',
      target: { type: 'api_key', id: fresh.id },
      actor: byUser(owner, 'owner'),
      request_id: requestIdOf(revoked),
      changes: {},
    });
    // Revoking again answers 204 and changes nothing: no second entry.
    const revokedAgain = await as(owner)('DELETE', `/developers/orgs/${org.id}/keys/${fresh.id}`);
    expect(revokedAgain.statusCode).toBe(204);

    const registration = {
      slug: `acme-lens-${org.id.slice(0, 8)}`,
      display_name: 'Acme Lens',
      public_key_pem: generateKeyPairSync('ed25519')
        .publicKey.export({ type: 'spki', format: 'pem' })
        .toString(),
      key_id: 'acme-2026',
      scope: 'global',
      manifest_url: 'https://jane-roe.example/manifest.json',
      callback_url: 'https://jane-roe.example/callback',
      publisher_org: 'Acme Kids Ltd',
      capability_domains: ['lens'],
    };
    const registered = await as(admin)('POST', `/developers/orgs/${org.id}/advisors`, registration);
    expect(registered.statusCode, registered.body).toBe(201);
    const advisor = registered.json();
    expected.push({
      action: 'advisor.registered',
      target: { type: 'advisor', id: advisor.id },
      actor: byUser(admin, 'admin'),
      request_id: requestIdOf(registered),
      changes: {
        slug: registration.slug,
        did: `did:ocss:${registration.slug}`,
        key_id: advisor.key_id,
        display_name: 'Acme Lens',
        scope: 'global',
        scope_family_id: null,
        manifest_url: '[redacted]',
        publisher_org: 'Acme Kids Ltd',
        callback_url: '[redacted]',
        capability_domains: ['lens'],
        tier: 'provisional',
        status: 'active',
      },
    });
    const taken = await as(admin)('POST', `/developers/orgs/${org.id}/advisors`, registration);
    expect(taken.statusCode).toBe(409);

    // A member leaving acts in the role it held.
    const left = await as(leaver)('DELETE', `/developers/orgs/${org.id}/members/${leaver.userId}`);
    expect(left.statusCode).toBe(204);
    expected.push({
      action: 'org_member.removed',
      target: { type: 'user', id: leaver.userId },
      actor: byUser(leaver, 'member'),
      request_id: requestIdOf(left),
      changes: {},
    });

    // What `npm run admin -- set-tier` and `set-advisor-tier` do, on the same database.
    const deps = { db: t.database.handle.db, clock: t.clock };
    const writes = createAuditedWrites(deps);
    await createOrgsService({ ...deps, users: createUsersService(deps), writes }).setTier(
      org.id,
      'pro',
    );
    const operator = { type: 'system', id: 'haven', label: 'operator' };
    expected.push({
      action: 'org.tier_changed',
      target: { type: 'org', id: org.id },
      actor: operator,
      request_id: null,
      changes: { tier: 'pro', rate_limit_rpm: 1000 },
    });
    expect(await changeTrustListEntry({ ...deps, writes }, advisor.did, { tier: 'verified' })).toBe(
      true,
    );
    expected.push({
      action: 'advisor.tier_changed',
      target: { type: 'advisor', id: advisor.id },
      actor: operator,
      request_id: null,
      changes: { tier: 'verified' },
    });

    const chain = await orgChain(owner, org.id);
    expect(chain.map((entry) => entry.action)).toEqual(expected.map((entry) => entry.action));
    chain.forEach((entry, index) => {
      const want = expected[index] as Expected;
      expect(entry, want.action).toMatchObject({
        seq: index + 1,
        org_id: org.id,
        family_id: null,
        action: want.action,
        target: want.target,
        actor: want.actor,
        request_id: want.request_id,
      });
      expect(entry.changes, want.action).toEqual(want.changes);
      expect(entry.prev_hash).toBe(index === 0 ? '0'.repeat(64) : chain[index - 1]?.hash);
    });
    // One entry per request: no request id twice.
    const requestIds = chain.flatMap((entry) => (entry.request_id ? [entry.request_id] : []));
    expect(new Set(requestIds).size).toBe(requestIds.length);
    // No secret, not even a hashed one, and no personal value.
    const text = JSON.stringify(chain);
    for (const secret of [key.key, fresh.key]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/Jane|jane-roe|kitchen|BEGIN PUBLIC KEY/);
    const admins = await orgChain(admin, org.id);
    expect(admins).toEqual(chain);
  });

  it('is read by owners and admins only: a member 403, a stranger 404, a key 401', async () => {
    const owner = await newSession(t.app);
    const member = await newSession(t.app);
    const stranger = await newSession(t.app);
    const created = await as(owner)('POST', '/developers/orgs', { name: 'Readers' });
    const orgId = created.json().id as string;
    const added = await as(owner)('POST', `/developers/orgs/${orgId}/members`, {
      user_id: member.userId,
      role: 'member',
    });
    expect(added.statusCode).toBe(201);
    const key = await mintKey(t.app, owner, orgId);
    const url = `/developers/orgs/${orgId}/audit-log`;
    const byMember = await as(member)('GET', url);
    expect(byMember.statusCode).toBe(403);
    expect(byMember.json().message).toBe('insufficient role for this action');
    const byStranger = await as(stranger)('GET', url);
    expect(byStranger.statusCode).toBe(404);
    expect(byStranger.json().message).toBe('developer org not found');
    const byKey = await t.app.inject({ url: `/api/v1${url}`, headers: bearer(key.key) });
    expect(byKey.statusCode).toBe(401);
    const unknown = await as(owner)('GET', `/developers/orgs/${crypto.randomUUID()}/audit-log`);
    expect(unknown.statusCode).toBe(404);
    expect((await orgChain(owner, orgId)).map((entry) => entry.action)).toEqual([
      'org.created',
      'org_member.added',
      'api_key.created',
    ]);
  });

  it('states nothing for writes that touch no family and no org', async () => {
    const before = await auditRowCount();
    // A sandbox session token, its logout (a no-op).
    const session = await newSession(t.app);
    const logout = await as(session)('POST', '/auth/logout');
    expect(logout.statusCode).toBe(204);
    // A self-registered advisor: on the trust list, of no org.
    const selfRegistered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/advisors/self-register',
      payload: {
        did: 'did:ocss:self-made',
        public_key_b64url: generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x,
      },
    });
    expect(selfRegistered.statusCode, selfRegistered.body).toBe(200);
    // The sandbox OAuth provider: a code, then a token, both stateless.
    const authorized = await t.app.inject({
      url: '/oauth/authorize?response_type=code&client_id=c&redirect_uri=https%3A%2F%2Fclient.example%2Fcb&state=s&decision=approve',
    });
    expect(authorized.statusCode).toBe(302);
    const code = new URL(authorized.headers.location as string).searchParams.get('code');
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'authorization_code', code },
    });
    expect(token.statusCode, token.body).toBe(200);
    // A platform publishing its connect config, signed: the seeded provider is of no org.
    const did = 'did:ocss:sandbox-provider';
    const pem = await loadServiceSecret(t.database.handle.db, `ocss-entity-key:${did}`);
    const document = JSON.parse(
      (await t.app.inject({ url: '/.well-known/ocss/trust-list' })).json().document,
    );
    const entry = document.entries.find((e: { did: string }) => e.did === did);
    t.clock.set(new Date());
    const published = await t.app.inject(
      await signedRequest(
        {
          keyId: `${did}#${entry.jwks.signing_keys[0].kid}`,
          privateKey: createPrivateKey(pem.toString('utf8')),
        },
        `/api/v1/platforms/${did}/connect`,
        {
          method: 'PATCH',
          body: {
            name: 'Sandbox Provider',
            authorize_url: 'https://provider.example/authorize',
            token_url: 'https://provider.example/token',
            profiles_url: 'https://provider.example/profiles',
            scopes: ['child_profiles.read'],
          },
          nonce: 'control-plane-coverage',
        },
      ),
    );
    expect(published.statusCode, published.body).toBe(200);
    expect(await auditRowCount()).toBe(before);
  });
});
