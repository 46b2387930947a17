// Statements Haven signs so their holder can prove them later (the audit log's head, erasure
// receipts): a compact JWS (EdDSA) by the steward key, `kid` as published at
// /.well-known/ocss/keys, over the statement's RFC 8785 (JCS) serialization.
import canonicalize from 'canonicalize';
import { CompactSign } from 'jose';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';

export async function signStatement(
  steward: Ed25519SigningKey,
  statement: object,
): Promise<string> {
  const text = canonicalize(statement);
  if (text === undefined) {
    throw new Error('the statement has no JCS form');
  }
  return new CompactSign(new TextEncoder().encode(text))
    .setProtectedHeader({ alg: 'EdDSA', kid: steward.kid })
    .sign(steward.privateKey);
}
