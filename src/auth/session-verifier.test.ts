import { createHmac, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../../test/clock.js';
import { JwksServer, newSigningKey, type SigningKey, signSession } from '../../test/jwks-server.js';
import { UnauthorizedError } from '../http/errors.js';
import { createSessionVerifier, remoteKeySet } from './session-verifier.js';

const ISS = 'https://id.example.test/';
const AUD = 'haven';

function b64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
    'base64url',
  );
}

describe('session tokens against a real JWKS endpoint', () => {
  const jwks = new JwksServer();
  const clock = new TestClock();
  let key: SigningKey;
  const now = () => Math.floor(clock.now().getTime() / 1000);
  const verifier = () =>
    createSessionVerifier({ keySet: remoteKeySet(jwks.url), issuer: ISS, audience: AUD, clock });

  beforeAll(async () => {
    await jwks.start();
    key = await newSigningKey('key-1');
    jwks.keys.push(key.jwk);
  });
  afterAll(async () => jwks.stop());

  const good = (over: Partial<Parameters<typeof signSession>[1]> = {}) =>
    signSession(key, {
      iss: ISS,
      sub: 'user-1',
      aud: AUD,
      iat: now(),
      exp: now() + 600,
      email: 'a@b.c',
      ...over,
    });

  async function expectRejected(token: string, v = verifier()) {
    const error = await v.verify(token).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as Error).message).toBe('invalid or expired token');
  }

  it('accepts a good token and reads its claims', async () => {
    expect(await verifier().verify(await good())).toEqual({
      issuer: ISS,
      subject: 'user-1',
      email: 'a@b.c',
      name: '',
    });
  });

  it('checks exp and nbf with a 30 s leeway', async () => {
    const v = verifier();
    await expect(v.verify(await good({ exp: now() - 20 }))).resolves.toBeDefined();
    await expectRejected(await good({ exp: now() - 40 }), v);
    await expect(v.verify(await good({ nbf: now() + 20 }))).resolves.toBeDefined();
    await expectRejected(await good({ nbf: now() + 40 }), v);
  });

  it('refuses a token once the moving clock passes exp by more than 30 s', async () => {
    const v = verifier();
    const token = await good({ exp: now() + 60 });
    await expect(v.verify(token)).resolves.toBeDefined();
    clock.advance(89_000); // 29 s past exp: still inside the leeway
    await expect(v.verify(token)).resolves.toBeDefined();
    clock.advance(2_000);
    await expectRejected(token, v);
  });

  it('requires a non-empty sub', async () => {
    const claims = { iss: ISS, aud: AUD, iat: now(), exp: now() + 600 };
    const header = { alg: 'RS256', kid: key.kid };
    await expectRejected(await new SignJWT(claims).setProtectedHeader(header).sign(key.privateKey));
    await expectRejected(
      await new SignJWT({ ...claims, sub: '' }).setProtectedHeader(header).sign(key.privateKey),
    );
  });

  it('checks iss and aud', async () => {
    await expectRejected(await good({ iss: 'https://evil.example/' }));
    await expectRejected(await good({ aud: 'someone-else' }));
  });

  it('refuses alg none and HS256, whatever they claim', async () => {
    const claims = { iss: ISS, sub: 'user-1', aud: AUD, iat: now(), exp: now() + 600 };
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
    await expectRejected(none);
    const head = b64url({ alg: 'HS256', typ: 'JWT', kid: 'key-1' });
    const body = b64url(claims);
    // The classic confusion attack: HMAC keyed with the public key material.
    const mac = createHmac('sha256', JSON.stringify(key.jwk))
      .update(`${head}.${body}`)
      .digest('base64url');
    await expectRejected(`${head}.${body}.${mac}`);
    const hs256 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'key-1' })
      .sign(randomBytes(32));
    await expectRejected(hs256);
  });

  it('re-fetches the key set for an unknown kid, then accepts the new key', async () => {
    const v = createSessionVerifier({
      keySet: remoteKeySet(jwks.url, { cooldownMs: 0 }),
      issuer: ISS,
      audience: AUD,
      clock,
    });
    await v.verify(await good());
    const afterFirst = jwks.requests;
    const rotated = await newSigningKey('key-2');
    const token = await signSession(rotated, {
      iss: ISS,
      sub: 'user-2',
      aud: AUD,
      iat: now(),
      exp: now() + 600,
    });
    await expectRejected(token, v);
    expect(jwks.requests).toBe(afterFirst + 1); // looked again for key-2, did not find it
    jwks.keys.push(rotated.jwk);
    expect((await v.verify(token)).subject).toBe('user-2');
    expect(jwks.requests).toBe(afterFirst + 2);
    // Known kids are served from the cached set: no further fetch.
    await v.verify(await good());
    expect(jwks.requests).toBe(afterFirst + 2);
  });

  it('answers 401, not a crash, when the key set cannot be fetched, and refuses garbage', async () => {
    const gone = new JwksServer();
    await gone.start();
    await gone.stop();
    const down = createSessionVerifier({ keySet: remoteKeySet(gone.url), issuer: ISS, clock });
    await expectRejected(await good(), down);
    for (const junk of ['', 'abc', 'a.b.c', `${'x'.repeat(20_000)}`, 'eyJ.eyJ.sig']) {
      await expectRejected(junk);
    }
  });
});
