// The trust list checked the way an outside verifier would: plain node:crypto and the
// canonicalize package, nothing of Haven's. Throws on any failure.
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface TrustListEntry {
  did: string;
  tier: string;
  status: string;
  roles: string[];
  jwks: { signing_keys: Array<Record<string, string>> };
  sig: string;
}

export interface TrustListDocument {
  ocss_version: string;
  schema_version: number;
  type: string;
  issue: { number: number; issued_at: string };
  entries: TrustListEntry[];
}

export type Jwk = Record<string, string>;

function signatureBytes(sig: string): Buffer {
  if (!sig.startsWith('ed25519:')) {
    throw new Error(`signature ${sig} does not start with ed25519:`);
  }
  return Buffer.from(sig.slice('ed25519:'.length), 'base64url');
}

/** Verifies an envelope (and each entry) against a JWKS as /.well-known/ocss/keys serves it. */
export function verifyTrustListBody(body: string, keys: Jwk[]) {
  const envelope = JSON.parse(body) as {
    document: string;
    key_id: string;
    alg: string;
    sig: string;
  };
  if (envelope.alg !== 'ed25519') {
    throw new Error(`alg ${envelope.alg}`);
  }
  if (envelope.document !== canonicalize(JSON.parse(envelope.document))) {
    throw new Error('document is not in canonical form');
  }
  const kid = envelope.key_id.split('#')[1];
  const jwk = keys.find((key) => key.kid === kid);
  if (!jwk) {
    throw new Error(
      `key_id ${envelope.key_id} is not among the served keys ${keys.map((k) => k.kid)}`,
    );
  }
  const steward = createPublicKey({ key: jwk as never, format: 'jwk' });
  if (!verify(null, Buffer.from(envelope.document), steward, signatureBytes(envelope.sig))) {
    throw new Error('the document signature does not verify');
  }
  const document = JSON.parse(envelope.document) as TrustListDocument;
  for (const entry of document.entries) {
    const { sig, ...unsigned } = entry;
    const bytes = Buffer.from(canonicalize(unsigned) as string);
    if (!verify(null, bytes, steward, signatureBytes(sig))) {
      throw new Error(`the signature of entry ${entry.did} does not verify`);
    }
  }
  return { document, keyId: envelope.key_id };
}

/** RFC 7638 thumbprint of an Ed25519 public JWK. */
export function thumbprintOf(x: string): string {
  return createHash('sha256')
    .update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)
    .digest('base64url');
}

/** A new steward key: its PKCS#8 PEM (for OCSS_STEWARD_KEY) and its kid. */
export function newStewardKey(): { pem: string; kid: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    kid: thumbprintOf(x),
  };
}
