// RFC 9421 Appendix B.2.6: the B.2 test request signed with test-key-ed25519 (B.1.4).
import { createPublicKey, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TestClock } from '../../test/clock.js';
import { loadSigningKeyPem } from './ed25519-key.js';
import { createMemoryNonceStore } from './nonce-store.js';
import { OcssError, type OcssErrorClass } from './ocss-error.js';
import { buildSignatureBase, type SignedRequest } from './signature-base.js';
import { parseReceivedSignature } from './signature-input.js';
import { type VerifySignedRequestOptions, verifySignedRequest } from './verify-signed-request.js';

/** B.1.4 test-key-ed25519. */
const TEST_KEY_ED25519_PRIVATE_PEM =
  '-----BEGIN PRIVATE KEY-----\n' +
  'MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n' +
  '-----END PRIVATE KEY-----\n';
const TEST_KEY_ED25519_PUBLIC_PEM =
  '-----BEGIN PUBLIC KEY-----\n' +
  'MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n' +
  '-----END PUBLIC KEY-----\n';

function testKeyEd25519Public(): KeyObject {
  return createPublicKey(TEST_KEY_ED25519_PUBLIC_PEM);
}

/** B.2: POST /foo?param=Value&Pet=dog to example.com, with its body and headers. */
const B2_TARGET_URI = 'https://example.com/foo?param=Value&Pet=dog';
const B2_HEADERS = {
  host: 'example.com',
  date: 'Tue, 20 Apr 2021 02:07:55 GMT',
  'content-type': 'application/json',
  'content-digest':
    'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
  'content-length': '18',
};
const B2_BODY = Buffer.from('{"hello": "world"}');

/** B.2.6: signing a request using ed25519. */
const B26_CREATED = 1618884473;
const B26_COMPONENTS = ['date', '@method', '@path', '@authority', 'content-type', 'content-length'];
const B26_SIGNATURE_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length")' +
  ';created=1618884473;keyid="test-key-ed25519"';
const B26_SIGNATURE =
  'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:';
const B26_SIGNATURE_BASE = [
  '"date": Tue, 20 Apr 2021 02:07:55 GMT',
  '"@method": POST',
  '"@path": /foo',
  '"@authority": example.com',
  '"content-type": application/json',
  '"content-length": 18',
  '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length")' +
    ';created=1618884473;keyid="test-key-ed25519"',
].join('\n');

function b26Request(): SignedRequest {
  return {
    method: 'POST',
    targetUri: B2_TARGET_URI,
    headers: {
      ...B2_HEADERS,
      'signature-input': B26_SIGNATURE_INPUT,
      signature: B26_SIGNATURE,
    },
    body: B2_BODY,
  };
}

async function failureOf(promise: Promise<unknown>): Promise<OcssError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(OcssError);
  return outcome as OcssError;
}

async function classOf(promise: Promise<unknown>): Promise<OcssErrorClass> {
  return (await failureOf(promise)).class;
}

describe('RFC 9421 B.2.6 signature base', () => {
  it('parses the Signature-Input and rebuilds the RFC base byte for byte', () => {
    const received = parseReceivedSignature(B26_SIGNATURE_INPUT, B26_SIGNATURE);
    expect(received.label).toBe('sig-b26');
    expect(received.components).toEqual(B26_COMPONENTS);
    expect(received.parameters).toEqual({ created: B26_CREATED, keyid: 'test-key-ed25519' });
    expect(received.signature).toHaveLength(64);
    expect(buildSignatureBase(b26Request(), received.components, received.signatureParams)).toBe(
      B26_SIGNATURE_BASE,
    );
  });

  it("signs that base with test-key-ed25519 into the RFC's signature (Ed25519 is deterministic)", async () => {
    const key = await loadSigningKeyPem(TEST_KEY_ED25519_PRIVATE_PEM);
    const signature = key.sign(Buffer.from(B26_SIGNATURE_BASE));
    expect(`sig-b26=:${signature.toString('base64')}:`).toBe(B26_SIGNATURE);
  });

  it('serializes @signature-params by the RFC 8941 rules, not by the received spacing', () => {
    const spaced =
      'sig-b26=(  "date" "@method"   "@path" "@authority" "content-type" "content-length" )' +
      ';  created=1618884473;   keyid="test-key-ed25519"  ';
    const received = parseReceivedSignature(spaced, B26_SIGNATURE);
    expect(buildSignatureBase(b26Request(), received.components, received.signatureParams)).toBe(
      B26_SIGNATURE_BASE,
    );
  });
});

describe('RFC 9421 B.2.6 (ed25519)', () => {
  const publicKey = testKeyEd25519Public();
  // One store for every check: B.2.6 carries no nonce, so nothing is claimed in it, and a
  // store allocates room for all its nonces up front (~10 ms a store).
  const nonces = createMemoryNonceStore({ clock: new TestClock() });
  const options = (): VerifySignedRequestOptions => ({
    now: new Date(B26_CREATED * 1000),
    resolveKey: (keyid) => (keyid === 'test-key-ed25519' ? { publicKey } : undefined),
    nonces,
    requiredComponents: B26_COMPONENTS,
    requireDigest: false,
    specVersion: null,
  });

  it("accepts the RFC's signature at its created time", async () => {
    await expect(verifySignedRequest(b26Request(), options())).resolves.toEqual({
      keyid: 'test-key-ed25519',
      label: 'sig-b26',
      created: B26_CREATED,
      components: B26_COMPONENTS,
    });
  });

  it('rejects every one-byte change of any input to the signature base', async () => {
    const flip = (text: string, index: number) =>
      text.slice(0, index) +
      String.fromCharCode(text.charCodeAt(index) ^ 1) +
      text.slice(index + 1);
    const variants: [string, (index: number) => SignedRequest, number][] = [];
    const base = b26Request();
    variants.push([
      'method',
      (i) => ({ ...base, method: flip(base.method, i) }),
      base.method.length,
    ]);
    // The covered parts of the target URI: the authority and the path (the query is not covered).
    const authorityStart = 'https://'.length;
    const pathEnd = B2_TARGET_URI.indexOf('?');
    variants.push([
      'authority and path',
      (i) => ({ ...base, targetUri: flip(B2_TARGET_URI, authorityStart + i) }),
      pathEnd - authorityStart,
    ]);
    for (const field of [
      ...B26_COMPONENTS.filter((c) => !c.startsWith('@')),
      'signature-input',
      'signature',
    ]) {
      const value = base.headers[field] as string;
      variants.push([
        field,
        (i) => ({ ...base, headers: { ...base.headers, [field]: flip(value, i) } }),
        value.length,
      ]);
    }

    let checked = 0;
    for (const [name, mutate, length] of variants) {
      for (let index = 0; index < length; index++) {
        const outcome = await verifySignedRequest(mutate(index), options()).then(
          () => `accepted a change of ${name} at byte ${index}`,
          (error: unknown) => (error instanceof OcssError ? 'rejected' : String(error)),
        );
        expect(outcome).toBe('rejected');
        checked++;
      }
    }
    // method 4 + authority and path 15 + date 29 + content-type 16 + content-length 2
    // + Signature-Input 123 + Signature 98.
    expect(checked).toBe(287);
  });

  it('rejects it outside the window around created', async () => {
    const late = { ...options(), now: new Date((B26_CREATED + 301) * 1000) };
    expect(await classOf(verifySignedRequest(b26Request(), late))).toBe('signature_invalid');
    const early = { ...options(), now: new Date((B26_CREATED - 301) * 1000) };
    expect(await classOf(verifySignedRequest(b26Request(), early))).toBe('signature_invalid');
  });

  it('checks a Content-Digest that is present even when not required', async () => {
    const request = b26Request();
    const changedBody = { ...request, body: Buffer.from('{"hello": "World"}') };
    const error = await failureOf(verifySignedRequest(changedBody, options()));
    expect(error.class).toBe('signature_invalid');
    expect(error.message).toContain('Content-Digest');
  });
});
