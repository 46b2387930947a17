// The trust list checked the way an outside verifier would (test/trust-list-verifier.ts:
// plain node:crypto and the canonicalize package, nothing of Haven's).
import { createHash, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { withTwoInstances } from '../../../test/instances.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { type Jwk, verifyTrustListBody } from '../../../test/trust-list-verifier.js';

async function fetchTrustList(t: TestApp, headers: Record<string, string> = {}) {
  return t.app.inject({ url: '/.well-known/ocss/trust-list', headers });
}

function newPublicKeyB64url(): string {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  return jwk.x as string;
}

/** Verifies with the published JWKS; returns the parsed document. */
async function verifyTrustList(t: TestApp, body: string) {
  const keys = (await t.app.inject({ url: '/.well-known/ocss/keys' })).json().keys as Jwk[];
  return verifyTrustListBody(body, keys).document;
}

describe('trust list', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('is signed by the steward, verifiable with node:crypto and canonicalize alone', async () => {
    const res = await fetchTrustList(t);
    expect(res.statusCode).toBe(200);
    const document = await verifyTrustList(t, res.body);
    expect(document).toMatchObject({
      ocss_version: 'OCSS-v1.0-pre',
      schema_version: 1,
      type: 'issue',
      issue: { number: 1 },
    });
    const byDid = new Map(document.entries.map((entry) => [entry.did, entry]));
    expect(byDid.get('did:ocss:haven-steward')).toMatchObject({
      tier: 'verified',
      status: 'active',
    });
    expect(byDid.get('did:ocss:sandbox-provider')).toMatchObject({ tier: 'verified' });
    expect(byDid.get('did:ocss:sandbox-unconfigured-provider')).toMatchObject({ tier: 'verified' });
  });

  it('publishes kids that are RFC 7638 thumbprints, and a key_id of did#kid', async () => {
    const keys = (await t.app.inject({ url: '/.well-known/ocss/keys' })).json().keys;
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', use: 'sig' });
    const thumbprint = createHash('sha256')
      .update(`{"crv":"Ed25519","kty":"OKP","x":"${key.x}"}`)
      .digest('base64url');
    expect(key.kid).toBe(thumbprint);
    const envelope = (await fetchTrustList(t)).json();
    expect(envelope.key_id).toBe(`did:ocss:haven-steward#${thumbprint}`);
  });

  it('has a strong ETag of its bytes, answers If-None-Match with an empty 304, and carries no rate-limit headers', async () => {
    const res = await fetchTrustList(t);
    const etag = `"${createHash('sha256').update(res.rawPayload).digest('hex')}"`;
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(Object.keys(res.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await fetchTrustList(t, { 'if-none-match': ifNoneMatch });
      expect(again.statusCode, ifNoneMatch).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
    }
    expect((await fetchTrustList(t, { 'if-none-match': '"stale"' })).statusCode).toBe(200);
    const keys = await t.app.inject({ url: '/.well-known/ocss/keys' });
    expect(keys.headers['cache-control']).toBe('public, max-age=300');
  });

  it('rises by exactly one on a change, and is byte-identical otherwise', async () => {
    const before = await fetchTrustList(t);
    expect((await fetchTrustList(t)).body).toBe(before.body);
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/advisors/self-register',
      payload: {
        did: 'did:ocss:rising',
        public_key_b64url: newPublicKeyB64url(),
        roles: ['editor'],
      },
    });
    expect(registered.statusCode).toBe(200);
    const after = await fetchTrustList(t);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const [was, now] = [
      JSON.parse(JSON.parse(before.body).document),
      await verifyTrustList(t, after.body),
    ];
    expect(now.issue.number).toBe(was.issue.number + 1);
    expect(now.entries.find((entry) => entry.did === 'did:ocss:rising')).toMatchObject({
      tier: 'provisional',
      status: 'active',
      roles: ['editor'],
    });
    // A refused registration changes nothing.
    const duplicate = await t.app.inject({
      method: 'POST',
      url: '/api/v1/advisors/self-register',
      payload: { did: 'did:ocss:rising', public_key_b64url: newPublicKeyB64url() },
    });
    expect(duplicate.statusCode).toBe(409);
    expect((await fetchTrustList(t)).body).toBe(after.body);
  });

  it('survives a restart byte for byte', async () => {
    const before = (await fetchTrustList(t)).body;
    const again = await buildTestApp({ database: t.database });
    try {
      expect((await fetchTrustList(again)).body).toBe(before);
    } finally {
      await again.app.close();
    }
  });
});

describe('trust list over a real socket (the 304 is answered ahead of routing)', () => {
  it('answers If-None-Match like the routed path does, and never from a stale tag', async () => {
    const t = await buildListeningTestApp();
    try {
      const url = `${t.baseUrl}/.well-known/ocss/trust-list`;
      const first = await fetch(url);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag') ?? '';
      const body = await first.text();
      expect(etag).toBe(`"${createHash('sha256').update(body).digest('hex')}"`);

      const cached = await fetch(url, {
        headers: { 'if-none-match': etag, 'x-request-id': 'poll-1' },
      });
      expect(cached.status).toBe(304);
      expect(await cached.text()).toBe('');
      expect(cached.headers.get('etag')).toBe(etag);
      expect(cached.headers.get('cache-control')).toBe('public, max-age=300');
      expect(cached.headers.get('x-request-id')).toBe('poll-1');
      expect(cached.headers.get('x-content-type-options')).toBe('nosniff');
      const head = await fetch(url, { method: 'HEAD', headers: { 'if-none-match': etag } });
      expect(head.status).toBe(304);

      // A change: the old tag now gets the new list.
      const registered = await fetch(`${t.baseUrl}/api/v1/advisors/self-register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ did: 'did:ocss:socket', public_key_b64url: newPublicKeyB64url() }),
      });
      expect(registered.status).toBe(200);
      const changed = await fetch(url, { headers: { 'if-none-match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      await verifyTrustList(t, await changed.text());
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('trust list across instances', () => {
  it('serves a change made on one instance from the other within a second', async () => {
    const clock = new TestClock();
    await withTwoInstances({ clock, env: {} }, async (a, b) => {
      const before = JSON.parse(JSON.parse((await fetchTrustList(b)).body).document).issue.number;
      const res = await a.app.inject({
        method: 'POST',
        url: '/api/v1/advisors/self-register',
        payload: { did: 'did:ocss:across', public_key_b64url: newPublicKeyB64url() },
      });
      expect(res.statusCode).toBe(200);
      // Without Redis in this test's environment, b finds the issue by its version check.
      const issueOnB = async () =>
        JSON.parse(JSON.parse((await fetchTrustList(b)).body).document).issue.number;
      const startedAt = Date.now();
      await eventually(async () => (await issueOnB()) === before + 1, 'b to serve the new issue');
      expect(Date.now() - startedAt).toBeLessThan(2_000);
    });
  });
});
