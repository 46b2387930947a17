// The trust-list envelope (CONTRACT.md §9): `document` is the RFC 8785 canonical JSON text
// of the issue, `sig` the steward's Ed25519 signature over its UTF-8 bytes, and every entry
// carries its own signature over the canonical entry without `sig`. Anyone can check both
// with a JCS implementation and any Ed25519 verifier.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { EntryRow, PublicJwk } from './entries-store.js';

export const OCSS_VERSION = 'OCSS-v1.0-pre';
export const SCHEMA_VERSION = 1;

/** What signs: the steward's key. */
export interface TrustListSigner {
  keyId: string;
  jwk: PublicJwk;
  sign(bytes: Buffer): Buffer;
}

export interface UnsignedEntry {
  did: string;
  entity: string;
  roles: string[];
  tier: string;
  status: string;
  registered_at: string;
  jwks: { signing_keys: PublicJwk[] };
}

function canonical(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) {
    throw new Error('value has no canonical JSON form');
  }
  return text;
}

function signatureOf(signer: TrustListSigner, text: string): string {
  return `ed25519:${signer.sign(Buffer.from(text, 'utf8')).toString('base64url')}`;
}

/** Entries in a stable order (by DID), as they are published. */
export function unsignedEntries(rows: EntryRow[]): UnsignedEntry[] {
  return [...rows]
    .sort((a, b) => (a.did < b.did ? -1 : a.did > b.did ? 1 : 0))
    .map((row) => ({
      did: row.did,
      entity: row.entity,
      roles: row.roles,
      tier: row.tier,
      status: row.status,
      registered_at: row.registered_at.toISOString(),
      jwks: { signing_keys: [row.public_jwk] },
    }));
}

/** Changes exactly when a published field of some entry changes. */
export function entriesDigest(entries: UnsignedEntry[]): string {
  return createHash('sha256').update(canonical(entries)).digest('hex');
}

/** The response body of one issue: built once, then served byte for byte. */
export function trustListBody(
  signer: TrustListSigner,
  issue: { number: number; issuedAt: Date },
  entries: UnsignedEntry[],
): string {
  const document = canonical({
    ocss_version: OCSS_VERSION,
    schema_version: SCHEMA_VERSION,
    type: 'issue',
    issue: { number: issue.number, issued_at: issue.issuedAt.toISOString() },
    entries: entries.map((entry) => ({ ...entry, sig: signatureOf(signer, canonical(entry)) })),
  });
  return JSON.stringify({
    document,
    key_id: signer.keyId,
    alg: 'ed25519',
    sig: signatureOf(signer, document),
  });
}
