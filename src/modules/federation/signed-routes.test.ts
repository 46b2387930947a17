// The signed OCSS routes over HTTP, with requests signed by an independent RFC 9421 library.
// Every error class and failed_step of CONTRACT.md §9 is provoked here.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createOrg, newSession } from '../../../test/identity.js';
import { type OcssSigner, signedRequest } from '../../../test/ocss-signer.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { CSM_CATALOG } from '../csm/catalog.js';
import { updateEntry } from './entries-store.js';

const BULK = '/api/v1/csm/reviews/bulk';
const SANDBOX_PROVIDER = 'did:ocss:sandbox-provider';
let nonceCounter = 0;
const nonce = () => `n-${++nonceCounter}`;

async function selfRegistered(t: TestApp, did: string): Promise<OcssSigner> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/advisors/self-register',
    payload: { did, public_key_b64url: publicKey.export({ format: 'jwk' }).x },
  });
  expect(res.statusCode).toBe(200);
  return { keyId: res.json().key_id, privateKey };
}

/** The seeded sandbox provider signs with the key this deployment generated for it. */
async function sandboxProvider(t: TestApp): Promise<OcssSigner> {
  const pem = await loadServiceSecret(t.database.handle.db, `ocss-entity-key:${SANDBOX_PROVIDER}`);
  const envelope = (await t.app.inject({ url: '/.well-known/ocss/trust-list' })).json();
  const entry = JSON.parse(envelope.document).entries.find(
    (e: { did: string }) => e.did === SANDBOX_PROVIDER,
  );
  return {
    keyId: `${SANDBOX_PROVIDER}#${entry.jwks.signing_keys[0].kid}`,
    privateKey: createPrivateKey(pem.toString('utf8')),
  };
}

function expectClass(
  res: { statusCode: number; json(): Record<string, unknown> },
  status: number,
  errorClass: string,
  failedStep?: string,
) {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  const body = res.json();
  expect(body.class).toBe(errorClass);
  expect(body.code).toBe(status);
  if (failedStep) {
    expect(body.failed_step).toBe(failedStep);
  } else {
    expect('failed_step' in body).toBe(false);
  }
}

describe('POST /api/v1/csm/reviews/bulk', () => {
  let t: TestApp;
  let advisor: OcssSigner;
  beforeAll(async () => {
    t = await buildTestApp();
    advisor = await selfRegistered(t, 'did:ocss:reader');
  });
  afterAll(() => t.close());

  const bulk = async (
    body: unknown,
    options: Parameters<typeof signedRequest>[2] | object = {},
    signer = advisor,
  ) => {
    t.clock.set(new Date());
    return t.app.inject(await signedRequest(signer, BULK, { body, nonce: nonce(), ...options }));
  };

  it('pages through the whole catalog, 25 at a time, next_cursor null at the end', async () => {
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const res = await bulk({ slugs: [], cursor });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.reviews.length).toBeLessThanOrEqual(25);
      seen.push(...body.reviews.map((r: { slug: string }) => r.slug));
      if (body.next_cursor === null) {
        break;
      }
      cursor = body.next_cursor;
    }
    expect(seen).toEqual(CSM_CATALOG.map((review) => review.slug));
    expect(seen.length).toBeGreaterThanOrEqual(200);
    const [first] = CSM_CATALOG;
    const one = await bulk({ slugs: [first?.slug], cursor: '' });
    expect(one.json()).toEqual({ reviews: [first], next_cursor: null });
    expect(Object.keys(first ?? {}).sort()).toEqual([
      'age_range_min',
      'age_rating',
      'descriptors',
      'is_family_friendly',
      'media_type',
      'parent_summary',
      'quality_stars',
      'slug',
      'title',
    ]);
    expect(new Set(CSM_CATALOG.map((r) => r.media_type))).toEqual(
      new Set(['movie', 'tv', 'game', 'app', 'book']),
    );
  });

  it('malformed (400): no OCSS-Spec-Version, a body the schema refuses, a foreign cursor', async () => {
    expectClass(await bulk({ slugs: [] }, { drop: ['ocss-spec-version'] }), 400, 'malformed');
    expectClass(await bulk({ slugs: 'all' }), 400, 'malformed');
    expectClass(
      await bulk({ slugs: Array.from({ length: 101 }, (_, i) => `s${i}`) }),
      400,
      'malformed',
    );
    const next = (await bulk({ slugs: [], cursor: '' })).json().next_cursor;
    expectClass(await bulk({ slugs: [CSM_CATALOG[0]?.slug], cursor: next }), 400, 'malformed');
    expectClass(await bulk({ slugs: [], cursor: 'garbage' }), 400, 'malformed');
  });

  it('signature_invalid (401): unsigned, tampered body, stale created, signature removed', async () => {
    const unsigned = await t.app.inject({ method: 'POST', url: BULK, payload: { slugs: [] } });
    expectClass(unsigned, 401, 'signature_invalid');
    expectClass(
      await bulk({ slugs: [] }, { tamperedBody: '{"slugs":["x"]}' }),
      401,
      'signature_invalid',
    );
    expectClass(
      await bulk({ slugs: [] }, { created: new Date(Date.now() - 301_000) }),
      401,
      'signature_invalid',
    );
    expectClass(await bulk({ slugs: [] }, { drop: ['signature'] }), 401, 'signature_invalid');
  });

  it('unknown_key (401): a keyid the trust list does not hold', async () => {
    const stranger = {
      keyId: 'did:ocss:nobody#abc',
      privateKey: generateKeyPairSync('ed25519').privateKey,
    };
    expectClass(await bulk({ slugs: [] }, {}, stranger), 401, 'unknown_key');
  });

  it('standing_failure: unregistered_slug, and authority_binding once the entry is suspended', async () => {
    expectClass(
      await bulk({ slugs: ['no-such-title-movie'] }),
      403,
      'standing_failure',
      'unregistered_slug',
    );
    const suspended = await selfRegistered(t, 'did:ocss:soon-suspended');
    expect((await bulk({ slugs: [] }, {}, suspended)).statusCode).toBe(200);
    // What `npm run admin -- set-advisor-status` does: change the entry, re-issue the list
    // (here the re-issue comes from the next registration; signatures are checked against
    // the served list, so the suspension counts from that issue on).
    await updateEntry(
      t.database.handle.db,
      'did:ocss:soon-suspended',
      { status: 'suspended' },
      new Date(),
    );
    await selfRegistered(t, 'did:ocss:next-registration');
    expectClass(
      await bulk({ slugs: [] }, {}, suspended),
      403,
      'standing_failure',
      'authority_binding',
    );
  });

  it('replay (409): a reused nonce; a reused idempotency key with another body', async () => {
    const once = await signedRequest(advisor, BULK, { body: { slugs: [] }, nonce: 'only-once' });
    t.clock.set(new Date());
    expect((await t.app.inject(once)).statusCode).toBe(200);
    expectClass(await t.app.inject(once), 409, 'replay');

    const first = await bulk({ slugs: [], cursor: '', idempotency_key: 'idem-1' });
    expect(first.statusCode).toBe(200);
    const replayed = await bulk({ slugs: [], cursor: '', idempotency_key: 'idem-1' });
    expect(replayed.statusCode).toBe(200);
    expect(replayed.headers['ocss-replay']).toBe('original');
    expect(replayed.body).toBe(first.body);
    expectClass(
      await bulk({ slugs: [CSM_CATALOG[1]?.slug], cursor: '', idempotency_key: 'idem-1' }),
      409,
      'replay',
    );
    // The header form works the same way.
    const header = { headers: { 'Idempotency-Key': 'idem-2' } };
    expect((await bulk({ slugs: [] }, header)).statusCode).toBe(200);
    expect((await bulk({ slugs: [] }, header)).headers['ocss-replay']).toBe('original');
    expectClass(await bulk({ slugs: ['x'] }, header), 409, 'replay');
  });

  it('unavailable (503): the registry cannot be read', async () => {
    const broken = await buildTestApp();
    const signer = await selfRegistered(broken, 'did:ocss:outage');
    await broken.database.handle.close();
    try {
      broken.clock.set(new Date());
      const res = await broken.app.inject(
        await signedRequest(signer, BULK, { body: { slugs: [] }, nonce: nonce() }),
      );
      expectClass(res, 503, 'unavailable');
    } finally {
      await broken.app.close();
    }
  });
});

describe('scope: a family-scoped advisor', () => {
  it('reads reviews for its family only (403 standing_failure / scope otherwise)', async () => {
    const t = await buildTestApp();
    try {
      const owner = await newSession(t.app);
      const org = await createOrg(t.app, owner);
      const family = (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/families',
          headers: owner.auth,
          payload: { name: 'Scoped' },
        })
      ).json();
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const registered = await t.app.inject({
        method: 'POST',
        url: `/api/v1/developers/orgs/${org.id}/advisors`,
        headers: owner.auth,
        payload: {
          slug: 'family-reader',
          display_name: 'Family Reader',
          public_key_pem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
          key_id: 'k1',
          scope: 'family',
          scope_family_id: family.id,
        },
      });
      expect(registered.statusCode).toBe(201);
      const signer = { keyId: registered.json().key_id, privateKey };
      const call = async (body: object) => {
        t.clock.set(new Date());
        return t.app.inject(await signedRequest(signer, BULK, { body, nonce: nonce() }));
      };
      expect((await call({ slugs: [], family_id: family.id })).statusCode).toBe(200);
      expectClass(await call({ slugs: [] }), 403, 'standing_failure', 'scope');
      expectClass(
        await call({ slugs: [], family_id: '00000000-0000-4000-8000-000000000000' }),
        403,
        'standing_failure',
        'scope',
      );
    } finally {
      await t.close();
    }
  });
});

describe('PATCH /api/v1/platforms/{did}/connect', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  const config = {
    name: 'Sandbox Provider v2',
    authorize_url: 'https://provider.example/authorize',
    token_url: 'https://provider.example/token',
    profiles_url: 'https://provider.example/profiles',
    scopes: ['child_profiles.read'],
  };
  const publish = async (signer: OcssSigner, did: string, body: unknown = config) => {
    t.clock.set(new Date());
    return t.app.inject(
      await signedRequest(signer, `/api/v1/platforms/${did}/connect`, {
        method: 'PATCH',
        body,
        nonce: nonce(),
      }),
    );
  };

  it('publishes the directory row, served afterwards by the connect config route', async () => {
    const provider = await sandboxProvider(t);
    const res = await publish(provider, SANDBOX_PROVIDER);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ did: SANDBOX_PROVIDER, ...config });
    const served = await t.app.inject({ url: `/api/v1/providers/${SANDBOX_PROVIDER}/connect` });
    expect(served.json()).toEqual({ did: SANDBOX_PROVIDER, ...config });
  });

  it('authority_binding for another DID; band_exceeds_tier for a provisional signer; malformed URLs', async () => {
    const provider = await sandboxProvider(t);
    expectClass(
      await publish(provider, 'did:ocss:sandbox-unconfigured-provider'),
      403,
      'standing_failure',
      'authority_binding',
    );
    const provisional = await selfRegistered(t, 'did:ocss:upstart');
    expectClass(
      await publish(provisional, 'did:ocss:upstart'),
      403,
      'standing_failure',
      'band_exceeds_tier',
    );
    expectClass(
      await publish(provider, SANDBOX_PROVIDER, { ...config, token_url: 'ftp://x' }),
      400,
      'malformed',
    );
    expectClass(
      await publish(provider, SANDBOX_PROVIDER, { ...config, scopes: 'all' }),
      400,
      'malformed',
    );
  });

  it('rate_limited (429) in the envelope once the caller’s bucket is spent', async () => {
    const limited = await buildTestApp();
    try {
      let last = await limited.app.inject({
        method: 'PATCH',
        url: `/api/v1/platforms/${SANDBOX_PROVIDER}/connect`,
        payload: config,
      });
      for (let i = 0; i < 100 && last.statusCode !== 429; i++) {
        last = await limited.app.inject({
          method: 'PATCH',
          url: `/api/v1/platforms/${SANDBOX_PROVIDER}/connect`,
          payload: config,
        });
      }
      expectClass(last, 429, 'rate_limited');
      expect(last.headers['retry-after']).toBe('60');
    } finally {
      await limited.close();
    }
  });
});
