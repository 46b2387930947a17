import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import fc from 'fast-check';
import { httpbis } from 'http-message-signatures';
import { describe, expect, it, vi } from 'vitest';
import { TestClock } from '../../test/clock.js';
import { createMemoryNonceStore, type NonceStore } from './nonce-store.js';
import { OcssError, type OcssErrorClass } from './ocss-error.js';
import type { SignedRequest } from './signature-base.js';
import { type VerifySignedRequestOptions, verifySignedRequest } from './verify-signed-request.js';

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

// ── Interop: requests signed by the independent http-message-signatures package ──────────

const TARGET = 'https://haven.example/api/v1/csm/reviews/bulk';
const NOW = new Date('2026-01-15T12:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const KEYID = 'did:ocss:sandbox-provider#kid-1';
const BODY = Buffer.from('{"slugs":[],"cursor":"","idempotency_key":"k-1"}');

const signer = generateKeyPairSync('ed25519');

interface SignOptions {
  privateKey?: KeyObject;
  keyid?: string;
  created?: number;
  nonce?: string | undefined;
  fields?: string[];
  params?: string[];
  paramValues?: Record<string, string | Date>;
  headers?: Record<string, string>;
  body?: Buffer;
}

async function signedRequest(options: SignOptions = {}): Promise<SignedRequest> {
  const body = options.body ?? BODY;
  const privateKey = options.privateKey ?? signer.privateKey;
  const headers = options.headers ?? {
    'Content-Type': 'application/json',
    'Content-Digest': `sha-256=:${createHash('sha256').update(body).digest('base64')}:`,
    'OCSS-Spec-Version': 'OCSS-v1.0-pre',
  };
  const nonce = 'nonce' in options ? options.nonce : 'nonce-1';
  const signed = await httpbis.signMessage(
    {
      key: {
        id: options.keyid ?? KEYID,
        alg: 'ed25519',
        sign: async (data: Buffer) => sign(null, data, privateKey),
      },
      fields: options.fields ?? ['@method', '@target-uri', 'content-digest', 'ocss-spec-version'],
      params: options.params ?? [
        'created',
        'keyid',
        'alg',
        ...(nonce === undefined ? [] : ['nonce']),
      ],
      paramValues: {
        created: new Date((options.created ?? NOW_SECONDS) * 1000),
        ...(nonce === undefined ? {} : { nonce }),
        ...options.paramValues,
      },
    },
    { method: 'POST', url: TARGET, headers },
  );
  return { method: 'POST', targetUri: TARGET, headers: signed.headers, body };
}

function ocssOptions(
  overrides: Partial<VerifySignedRequestOptions> = {},
): VerifySignedRequestOptions {
  return {
    now: NOW,
    resolveKey: (keyid) => (keyid === KEYID ? { publicKey: signer.publicKey } : undefined),
    // A fresh store per verification, sized for a test: the default makes room for 100 000
    // nonces up front (~10 ms), which the property test below would pay 500 times.
    nonces: createMemoryNonceStore({ clock: new TestClock(NOW), maxNonces: 100 }),
    ...overrides,
  };
}

function withoutHeader(request: SignedRequest, name: string): SignedRequest {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([key]) => key.toLowerCase() !== name),
  );
  return { ...request, headers };
}

describe('interop with http-message-signatures', () => {
  it('accepts its signature with the OCSS defaults', async () => {
    await expect(verifySignedRequest(await signedRequest(), ocssOptions())).resolves.toEqual({
      keyid: KEYID,
      label: 'sig',
      created: NOW_SECONDS,
      nonce: 'nonce-1',
      components: ['@method', '@target-uri', 'content-digest', 'ocss-spec-version'],
    });
  });

  it('accepts it without a nonce, and with sha-512 and extra covered fields', async () => {
    const body = BODY;
    const request = await signedRequest({
      nonce: undefined,
      fields: [
        '@method',
        '@target-uri',
        '@path',
        '@query',
        'content-digest',
        'ocss-spec-version',
        'content-type',
      ],
      headers: {
        'content-type': 'application/json',
        'content-digest': `sha-512=:${createHash('sha512').update(body).digest('base64')}:`,
        'ocss-spec-version': 'OCSS-v1.0-pre',
      },
    });
    const verified = await verifySignedRequest(request, ocssOptions());
    expect(verified.nonce).toBeUndefined();
    expect('nonce' in verified).toBe(false);
  });

  it('refuses a replayed nonce as replay, per keyid', async () => {
    const options = ocssOptions();
    const request = await signedRequest();
    await verifySignedRequest(request, options);
    const error = await failureOf(verifySignedRequest(request, options));
    expect(error.class).toBe('replay');
    expect(error.status).toBe(409);

    // The same nonce under another key is that key's first use.
    const other = generateKeyPairSync('ed25519');
    const otherKeyid = 'did:ocss:other#kid-2';
    const resolveKey = (keyid: string) =>
      keyid === otherKeyid ? { publicKey: other.publicKey } : undefined;
    const fromOther = await signedRequest({ privateKey: other.privateKey, keyid: otherKeyid });
    await expect(verifySignedRequest(fromOther, { ...options, resolveKey })).resolves.toMatchObject(
      {
        nonce: 'nonce-1',
      },
    );
  });

  it('refuses a changed body (digest mismatch) as signature_invalid', async () => {
    const request = await signedRequest();
    const tampered = { ...request, body: Buffer.from(BODY.toString().replace('k-1', 'k-2')) };
    const error = await failureOf(verifySignedRequest(tampered, ocssOptions()));
    expect(error.class).toBe('signature_invalid');
    expect(error.message).toBe('Content-Digest sha-256 does not match the body');
  });

  it('accepts created 300 s away and refuses 301 s, either way', async () => {
    for (const [offset, accepted] of [
      [-300, true],
      [300, true],
      [-301, false],
      [301, false],
    ] as const) {
      const request = await signedRequest({ created: NOW_SECONDS + offset });
      const outcome = verifySignedRequest(request, ocssOptions());
      if (accepted) {
        await expect(outcome).resolves.toBeDefined();
      } else {
        expect(await classOf(outcome)).toBe('signature_invalid');
      }
    }
  });

  it('refuses an expired signature', async () => {
    const request = await signedRequest({
      params: ['created', 'expires', 'keyid', 'alg'],
      paramValues: { expires: new Date((NOW_SECONDS - 1) * 1000) },
    });
    expect((await failureOf(verifySignedRequest(request, ocssOptions()))).message).toContain(
      'expired',
    );
  });

  it('refuses an unknown keyid as unknown_key', async () => {
    const request = await signedRequest({ keyid: 'did:ocss:stranger#kid' });
    const error = await failureOf(verifySignedRequest(request, ocssOptions()));
    expect(error.class).toBe('unknown_key');
    expect(error.status).toBe(401);
  });

  it('refuses a missing or different OCSS-Spec-Version as malformed', async () => {
    const request = await signedRequest();
    const missing = withoutHeader(request, 'ocss-spec-version');
    const error = await failureOf(verifySignedRequest(missing, ocssOptions()));
    expect(error.class).toBe('malformed');
    expect(error.status).toBe(400);
    expect(error.message).toBe('OCSS-Spec-Version is required: send OCSS-v1.0-pre');

    const other = await signedRequest({
      headers: {
        'content-digest': `sha-256=:${createHash('sha256').update(BODY).digest('base64')}:`,
        'ocss-spec-version': 'OCSS-v2.0',
      },
    });
    expect(await classOf(verifySignedRequest(other, ocssOptions()))).toBe('malformed');
  });

  it('refuses an unsigned request, a missing digest, or one not covered', async () => {
    const request = await signedRequest();
    const unsigned = withoutHeader(withoutHeader(request, 'signature'), 'signature-input');
    expect(await classOf(verifySignedRequest(unsigned, ocssOptions()))).toBe('signature_invalid');

    const noDigest = withoutHeader(request, 'content-digest');
    expect(await classOf(verifySignedRequest(noDigest, ocssOptions()))).toBe('signature_invalid');

    const uncovered = await signedRequest({
      fields: ['@method', '@target-uri', 'ocss-spec-version'],
    });
    const error = await failureOf(verifySignedRequest(uncovered, ocssOptions()));
    expect(error.class).toBe('signature_invalid');
    expect(error.message).toBe('the signature must cover "content-digest"');
  });

  it('refuses missing required components, keyid, created, and other algorithms', async () => {
    const noTarget = await signedRequest({
      fields: ['@method', 'content-digest', 'ocss-spec-version'],
    });
    expect((await failureOf(verifySignedRequest(noTarget, ocssOptions()))).message).toContain(
      '@target-uri',
    );
    const noKeyid = await signedRequest({ params: ['created', 'alg'], keyid: '' });
    expect((await failureOf(verifySignedRequest(noKeyid, ocssOptions()))).message).toContain(
      'keyid',
    );
    const noCreated = await signedRequest({ params: ['keyid', 'alg'] });
    expect((await failureOf(verifySignedRequest(noCreated, ocssOptions()))).message).toContain(
      'created',
    );
    const rsa = await signedRequest({ paramValues: { alg: 'rsa-pss-sha512' } });
    expect((await failureOf(verifySignedRequest(rsa, ocssOptions()))).message).toContain(
      'rsa-pss-sha512',
    );
  });

  it('refuses a signature by another key, and a key that is not Ed25519', async () => {
    const impostor = await signedRequest({ privateKey: generateKeyPairSync('ed25519').privateKey });
    expect(await classOf(verifySignedRequest(impostor, ocssOptions()))).toBe('signature_invalid');

    const rsaKey = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    const options = ocssOptions({ resolveKey: () => ({ publicKey: rsaKey }) });
    expect(await classOf(verifySignedRequest(await signedRequest(), options))).toBe(
      'signature_invalid',
    );
  });

  it('refuses a second signature as signature_invalid', async () => {
    const once = await signedRequest();
    const twice = await httpbis.signMessage(
      {
        key: {
          id: KEYID,
          alg: 'ed25519',
          sign: async (data: Buffer) => sign(null, data, signer.privateKey),
        },
        fields: ['@method'],
        params: ['created', 'keyid'],
        paramValues: { created: NOW },
      },
      { method: 'POST', url: TARGET, headers: once.headers as Record<string, string> },
    );
    const error = await failureOf(
      verifySignedRequest({ ...once, headers: twice.headers }, ocssOptions()),
    );
    expect(error.class).toBe('signature_invalid');
    expect(error.message).toBe('exactly one signature is accepted');
  });

  it('maps failing dependencies to unavailable, and lets their OcssErrors through', async () => {
    const request = await signedRequest();
    const brokenLookup = ocssOptions({
      resolveKey: async () => {
        throw new Error('database down');
      },
    });
    expect(await classOf(verifySignedRequest(request, brokenLookup))).toBe('unavailable');

    const suspended = ocssOptions({
      resolveKey: () => {
        throw OcssError.standingFailure('authority_binding', 'entry suspended');
      },
    });
    const standing = await failureOf(verifySignedRequest(request, suspended));
    expect(standing.class).toBe('standing_failure');
    expect(standing.failedStep).toBe('authority_binding');

    const brokenNonces: NonceStore = {
      claim: async () => {
        throw new Error('redis down');
      },
    };
    expect(await classOf(verifySignedRequest(request, ocssOptions({ nonces: brokenNonces })))).toBe(
      'unavailable',
    );
  });

  it('claims the nonce only once everything else has passed', async () => {
    const nonces: NonceStore = { claim: vi.fn(async () => true) };
    const request = await signedRequest();
    const tampered = { ...request, body: Buffer.from('{}') };
    await failureOf(verifySignedRequest(tampered, ocssOptions({ nonces })));
    const impostor = await signedRequest({ privateKey: generateKeyPairSync('ed25519').privateKey });
    await failureOf(verifySignedRequest(impostor, ocssOptions({ nonces })));
    expect(nonces.claim).not.toHaveBeenCalled();

    await verifySignedRequest(request, ocssOptions({ nonces }));
    expect(nonces.claim).toHaveBeenCalledWith(
      KEYID,
      'nonce-1',
      new Date((NOW_SECONDS + 300) * 1000),
    );
  });
});

describe('hostile input', () => {
  it('ends every request in success or an OcssError', async () => {
    const valid = await signedRequest();
    const validHeaders = valid.headers as Record<string, string>;
    const fieldText = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom(...Object.values(validHeaders)),
      fc
        .constantFrom(...Object.values(validHeaders))
        .chain((value) =>
          fc
            .tuple(fc.nat({ max: value.length }), fc.string({ maxLength: 3 }))
            .map(([at, insert]) => value.slice(0, at) + insert + value.slice(at + 1)),
        ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom(
            'signature',
            'Signature-Input',
            'content-digest',
            'ocss-spec-version',
            'content-type',
          ),
          fc.oneof(fieldText, fc.array(fieldText, { maxLength: 3 })),
        ),
        fc.constantFrom('POST', 'post', '', 'GET\r\nX: y'),
        fc.constantFrom(TARGET, '', 'not a url', 'https://[::1', `${TARGET}?q=%ZZ`),
        fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
        async (overrides, method, targetUri, body) => {
          const request: SignedRequest = {
            method,
            targetUri,
            headers: { ...validHeaders, ...overrides },
            body: body === undefined ? undefined : Buffer.from(body),
          };
          const outcome = await verifySignedRequest(request, ocssOptions()).then(
            () => 'ok',
            (error: unknown) => (error instanceof OcssError ? 'ok' : error),
          );
          expect(outcome).toBe('ok');
        },
      ),
      { numRuns: 500 },
    );
  });
});
