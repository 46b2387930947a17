// How Haven names and publishes public keys: every `kid` is the RFC 7638 thumbprint of the
// key (so anyone can recompute it from the JWK alone) and a `key_id` is `<did>#<kid>`.
import type { KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { OcssError } from './ocss-error.js';

/** The JWK form of an Ed25519 public key in `/.well-known/ocss/keys` and the trust list. */
export interface OkpPublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

/**
 * RFC 7638 SHA-256 thumbprint, base64url. jose hashes only the members the key type
 * requires (OKP: crv, kty, x; RSA: e, kty, n) in canonical order, so `kid`, `use` and
 * `alg` never change the result.
 */
export function jwkThumbprint(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(jwk, 'sha256');
}

export async function publicJwkFor(publicKey: KeyObject): Promise<OkpPublicJwk> {
  // A private KeyObject would export `d` too: only a public key may become a published JWK.
  if (publicKey.type !== 'public' || publicKey.asymmetricKeyType !== 'ed25519') {
    throw OcssError.malformed('only an Ed25519 public key can be published as a JWK');
  }
  const exported = publicKey.export({ format: 'jwk' });
  if (typeof exported.x !== 'string') {
    throw OcssError.malformed('the Ed25519 key has no public value');
  }
  const x = exported.x;
  const kid = await jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x });
  return { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' };
}

/** The `key_id` of a federation key: the entity's DID, `#`, the key's thumbprint. */
export function keyIdFor(did: string, kid: string): string {
  return `${did}#${kid}`;
}
