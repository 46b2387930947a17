// signRequest checked twice over: by Haven's own verifier (the app in-process, a key
// registered the way an advisor does it), and by the independent http-message-signatures
// package, so RFC 9421 conformance does not rest on Haven's reading of the RFC.
import { createHash, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { httpbis } from 'http-message-signatures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TEST_BASE_URL } from '../../../test/ocss-signer.js';
import {
  type Ed25519PrivateJwk,
  OCSS_SPEC_VERSION,
  type Signer,
  signRequest,
} from '../src/signer.js';

const BULK = '/api/v1/csm/reviews/bulk';
const COVERED = ['@method', '@target-uri', 'content-digest', 'ocss-spec-version'];

interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

/** The same key in each form `Signer.privateKey` takes. */
async function signerForms(keyId: string, keys: KeyPair): Promise<Record<string, Signer>> {
  const der = keys.privateKey.export({ format: 'der', type: 'pkcs8' });
  const cryptoKey = await crypto.subtle.importKey('pkcs8', der, 'Ed25519', false, ['sign']);
  return {
    pem: { keyId, privateKey: keys.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string },
    cryptoKey: { keyId, privateKey: cryptoKey },
    jwk: { keyId, privateKey: keys.privateKey.export({ format: 'jwk' }) as Ed25519PrivateJwk },
  };
}

async function signed(signer: Signer, body: string, options?: Parameters<typeof signRequest>[2]) {
  const headers = { 'Content-Type': 'application/json' };
  const added = await signRequest(
    signer,
    { method: 'POST', url: `${TEST_BASE_URL}${BULK}`, headers, body },
    options,
  );
  return { method: 'POST' as const, url: BULK, headers: { ...headers, ...added }, payload: body };
}

describe('signRequest against Haven’s verifier', () => {
  let t: TestApp;
  let forms: Record<string, Signer>;
  beforeAll(async () => {
    t = await buildTestApp();
    const keys = generateKeyPairSync('ed25519');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/advisors/self-register',
      payload: {
        did: 'did:ocss:sdk-signer',
        public_key_b64url: keys.publicKey.export({ format: 'jwk' }).x,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    forms = await signerForms(res.json().key_id, keys);
  });
  afterAll(() => t.close());

  it.each(['pem', 'cryptoKey', 'jwk'])('accepts a request signed with a %s key', async (form) => {
    t.clock.set(new Date());
    const res = await t.app.inject(await signed(forms[form] as Signer, '{"slugs":[]}'));
    expect(res.statusCode, res.body).toBe(200);
    // An empty slug list asks for the first page of the catalog.
    expect(res.json().reviews.length).toBeGreaterThan(0);
  });

  it('is refused when the body is altered after signing', async () => {
    t.clock.set(new Date());
    const request = await signed(forms.pem as Signer, '{"slugs":[]}');
    const res = await t.app.inject({ ...request, payload: '{"slugs":["x"]}' });
    expect(res.statusCode).toBe(401);
    expect(res.json().class).toBe('signature_invalid');
  });

  it('sends a fresh nonce by default, so a replayed request is refused', async () => {
    t.clock.set(new Date());
    const request = await signed(forms.pem as Signer, '{"slugs":[]}');
    expect((await t.app.inject(request)).statusCode).toBe(200);
    const replayed = await t.app.inject(request);
    expect(replayed.statusCode).toBe(409);
    expect(replayed.json().class).toBe('replay');
    // Signing the same body again is a new request, not a replay.
    expect((await t.app.inject(await signed(forms.pem as Signer, '{"slugs":[]}'))).statusCode).toBe(
      200,
    );
  });

  it('uses `created` as given: Haven’s ±300 s window decides', async () => {
    const at = new Date('2026-01-15T12:00:00.000Z');
    t.clock.set(at);
    const fresh = await signed(forms.jwk as Signer, '{"slugs":[]}', { created: at });
    expect((await t.app.inject(fresh)).statusCode).toBe(200);
    const stale = await signed(forms.jwk as Signer, '{"slugs":[]}', {
      created: new Date(at.getTime() - 301_000),
    });
    expect((await t.app.inject(stale)).statusCode).toBe(401);
  });
});

describe('signRequest against http-message-signatures (RFC 9421)', () => {
  const keys = generateKeyPairSync('ed25519');
  const keyId = 'did:ocss:independent#k1';
  const url = 'https://haven.example/api/v1/platforms/did%3Aocss%3Ap/connect';
  const body = '{"connected":true,"note":"é"}';
  const created = new Date('2025-06-01T00:00:00Z');
  const nonce = 'fixed-nonce';

  const verifyWith = (publicKey: KeyObject, headers: Record<string, string>) =>
    httpbis.verifyMessage(
      {
        keyLookup: async (params) =>
          params.keyid === keyId
            ? {
                id: keyId,
                algs: ['ed25519'],
                verify: async (data, signature) => verify(null, data, publicKey, signature),
              }
            : null,
        requiredFields: COVERED,
        requiredParams: ['created', 'keyid', 'alg', 'nonce'],
      },
      { method: 'PATCH', url, headers },
    );

  it.each(['pem', 'cryptoKey', 'jwk'])('verifies with a %s key', async (form) => {
    const signer = (await signerForms(keyId, keys))[form] as Signer;
    const headers = { 'Content-Type': 'application/json' };
    const added = await signRequest(
      signer,
      { method: 'PATCH', url, headers, body },
      { created, nonce },
    );
    expect(added['OCSS-Spec-Version']).toBe(OCSS_SPEC_VERSION);
    expect(added['Content-Digest']).toBe(
      `sha-256=:${createHash('sha256').update(body).digest('base64')}:`,
    );
    expect(await verifyWith(keys.publicKey, { ...headers, ...added })).toBe(true);
    const stranger = generateKeyPairSync('ed25519').publicKey;
    expect(await verifyWith(stranger, { ...headers, ...added })).toBe(false);
  });

  it('produces byte for byte what the package signs (Ed25519 is deterministic)', async () => {
    const signer = (await signerForms(keyId, keys)).pem as Signer;
    const headers = { 'OCSS-Spec-Version': OCSS_SPEC_VERSION };
    const added = await signRequest(
      signer,
      { method: 'PATCH', url, headers, body },
      { created, nonce },
    );
    expect(added['OCSS-Spec-Version']).toBeUndefined();
    const reference = await httpbis.signMessage(
      {
        key: { id: keyId, alg: 'ed25519', sign: async (data) => sign(null, data, keys.privateKey) },
        name: 'sig1',
        fields: COVERED,
        params: ['created', 'keyid', 'alg', 'nonce'],
        paramValues: { created, nonce },
      },
      {
        method: 'PATCH',
        url,
        headers: { ...headers, 'Content-Digest': added['Content-Digest'] as string },
      },
    );
    const expected = reference.headers as Record<string, string>;
    expect(added['Signature-Input']).toBe(expected['Signature-Input']);
    expect(added.Signature).toBe(expected.Signature);
  });

  it('defaults created to now and the nonce to 128 random bits', async () => {
    const signer = (await signerForms(keyId, keys)).jwk as Signer;
    const request = { method: 'POST', url, headers: {}, body };
    const before = Math.floor(Date.now() / 1000);
    const [a, b] = [await signRequest(signer, request), await signRequest(signer, request)];
    const params = /;created=(\d+);keyid="[^"]+";alg="ed25519";nonce="([A-Za-z0-9_-]{22})"$/;
    const [, createdA, nonceA] = params.exec(a['Signature-Input'] as string) ?? [];
    const [, , nonceB] = params.exec(b['Signature-Input'] as string) ?? [];
    expect(Number(createdA)).toBeGreaterThanOrEqual(before);
    expect(Number(createdA)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect(nonceA).toBeDefined();
    expect(nonceA).not.toBe(nonceB);
  });

  it('refuses keys and URLs it cannot sign with', async () => {
    const request = { method: 'POST', url, headers: {}, body };
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    await expect(
      signRequest(
        { keyId, privateKey: rsa.export({ format: 'jwk' }) as unknown as Ed25519PrivateJwk },
        request,
      ),
    ).rejects.toThrow(/Ed25519/);
    await expect(
      signRequest({ keyId, privateKey: '-----BEGIN ENCRYPTED PRIVATE KEY-----' }, request),
    ).rejects.toThrow(/PKCS#8/);
    const signer = (await signerForms(keyId, keys)).pem as Signer;
    await expect(signRequest(signer, { ...request, url: '/relative' })).rejects.toThrow(/absolute/);
  });
});
