// Ed25519 keys for the steward and for federation entities, on node:crypto only. Every
// parser refuses anything that is not exactly an Ed25519 key of the expected kind (a private
// PEM handed to the public-key parser would otherwise quietly yield its public half).
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';
import { OcssError } from './ocss-error.js';
import { type OkpPublicJwk, publicJwkFor } from './public-jwk.js';

export const ED25519_PUBLIC_KEY_BYTES = 32;
export const ED25519_SIGNATURE_BYTES = 64;

/** The steward's (or any signer's) key, with the identifiers the federation publishes. */
export interface Ed25519SigningKey {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** RFC 7638 thumbprint of the public key: the `kid` of every JWK Haven publishes. */
  readonly kid: string;
  readonly publicJwk: OkpPublicJwk;
  sign(bytes: Uint8Array): Buffer;
}

const PKCS8_PEM =
  /^-----BEGIN PRIVATE KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PRIVATE KEY-----$/;
const SPKI_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PUBLIC KEY-----$/;
const BASE64URL_32_BYTES = /^[A-Za-z0-9_-]{43}$/;

/** Wraps an Ed25519 private key; refuses any other key. */
export async function signingKeyFrom(privateKey: KeyObject): Promise<Ed25519SigningKey> {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw OcssError.malformed(`expected an Ed25519 private key, got ${describeKey(privateKey)}`);
  }
  const publicKey = createPublicKey(privateKey);
  const publicJwk = await publicJwkFor(publicKey);
  return Object.freeze({
    privateKey,
    publicKey,
    kid: publicJwk.kid,
    publicJwk,
    sign: (bytes: Uint8Array) => signBytes(privateKey, bytes),
  });
}

/** Loads `OCSS_STEWARD_KEY`: an unencrypted PKCS#8 PEM holding an Ed25519 key, nothing else. */
export async function loadSigningKeyPem(pem: string): Promise<Ed25519SigningKey> {
  const body = PKCS8_PEM.exec(pem.trim())?.[1];
  if (body === undefined) {
    throw OcssError.malformed('expected a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)');
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({
      key: Buffer.from(body, 'base64'),
      format: 'der',
      type: 'pkcs8',
    });
  } catch {
    throw OcssError.malformed('the PKCS#8 PEM does not hold a readable private key');
  }
  return signingKeyFrom(privateKey);
}

export function generateSigningKey(): Promise<Ed25519SigningKey> {
  return signingKeyFrom(generateKeyPairSync('ed25519').privateKey);
}

/** The PKCS#8 PEM of a key, for keeping a generated sandbox key. */
export function exportPrivateKeyPem(key: Ed25519SigningKey): string {
  return key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

export function signBytes(privateKey: KeyObject, bytes: Uint8Array): Buffer {
  // Ed25519 hashes internally: the digest argument must be null.
  return sign(null, bytes, privateKey);
}

/**
 * False for a wrong signature, a signature of the wrong length, or a non-Ed25519 key. Runs on
 * libuv's thread pool: one verification is ~130 µs of CPU on a small server (`openssl speed
 * ed25519`), which on the event loop would hold up every other request for that long; in the
 * pool it runs beside them, on another core where there is one.
 */
export function verifyBytes(
  publicKey: KeyObject,
  bytes: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  if (publicKey.asymmetricKeyType !== 'ed25519' || signature.length !== ED25519_SIGNATURE_BYTES) {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    try {
      verify(null, bytes, publicKey, signature, (error, valid) => resolve(!error && valid));
    } catch {
      resolve(false);
    }
  });
}

/** An Ed25519 public key from its 32 raw bytes in unpadded base64url (a JWK's `x`). */
export function parsePublicKeyRaw(base64url: string): KeyObject {
  if (!BASE64URL_32_BYTES.test(base64url)) {
    throw OcssError.malformed('expected 32 bytes of base64url (43 characters) for an Ed25519 key');
  }
  const raw = Buffer.from(base64url, 'base64url');
  // 43 characters carry 258 bits: the 2 spare bits must be zero or the text is not canonical.
  if (raw.length !== ED25519_PUBLIC_KEY_BYTES || raw.toString('base64url') !== base64url) {
    throw OcssError.malformed('the base64url text is not a canonical 32-byte value');
  }
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: base64url }, format: 'jwk' });
  } catch {
    throw OcssError.malformed('not a usable Ed25519 public key');
  }
}

/** An Ed25519 public key from an SPKI PEM (-----BEGIN PUBLIC KEY-----); refuses other keys. */
export function parsePublicKeySpkiPem(pem: string): KeyObject {
  const body = SPKI_PEM.exec(pem.trim())?.[1];
  if (body === undefined) {
    throw OcssError.malformed('expected an SPKI PEM (-----BEGIN PUBLIC KEY-----)');
  }
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: Buffer.from(body, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw OcssError.malformed('the SPKI PEM does not hold a readable public key');
  }
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    throw OcssError.malformed(`expected an Ed25519 public key, got ${describeKey(publicKey)}`);
  }
  return publicKey;
}

function describeKey(key: KeyObject): string {
  return `a ${key.asymmetricKeyType ?? 'symmetric'} ${key.type} key`;
}
