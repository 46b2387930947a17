// What Haven signs with its steward key (an audit log's head, an erasure receipt), checked
// where its holder is: a compact JWS (EdDSA, `kid` as published at /.well-known/ocss/keys)
// whose payload must be the RFC 8785 (JCS) form of the statement the holder has, so a
// statement changed after it was signed fails as a bad signature does. WebCrypto only
// (Ed25519), so it runs in browsers as in Node 20+.
import canonicalize from 'canonicalize';
import { fromBase64Url } from './base64.js';

/** An Ed25519 public key as `/.well-known/ocss/keys` lists it. */
export interface StewardJwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
}

/** The steward's public key, or the whole `/.well-known/ocss/keys` answer (`{keys}`). */
export type StewardKeys = StewardJwk | { keys: readonly StewardJwk[] };

export type StewardSignatureCheck =
  | { ok: true; kid: string }
  | { ok: false; reason: string }
  /** The runtime cannot check Ed25519: nothing was said either way. */
  | { skipped: string };

function keysOf(stewardKey: unknown): readonly StewardJwk[] | undefined {
  if (typeof stewardKey !== 'object' || stewardKey === null) {
    return undefined;
  }
  if ('keys' in stewardKey) {
    return Array.isArray(stewardKey.keys) ? stewardKey.keys : undefined;
  }
  return [stewardKey as StewardJwk];
}

/** The JCS text of a statement, or undefined when it has none (NaN, a cycle, …). */
function jcsOf(statement: unknown): string | undefined {
  try {
    return canonicalize(statement);
  } catch {
    return undefined;
  }
}

/**
 * Checks `jws` against the steward keys and `statement` (what it must cover). `what` names
 * the signed thing in the reasons ("the head", "the receipt"). Never throws.
 */
export async function checkStewardSignature(
  jws: unknown,
  statement: unknown,
  stewardKey: StewardKeys,
  what: string,
): Promise<StewardSignatureCheck> {
  const notJws = { ok: false, reason: `${what}'s signature is not a compact JWS` } as const;
  if (typeof jws !== 'string') {
    return notJws;
  }
  const [header, payload, signature, ...rest] = jws.split('.');
  if (header === undefined || payload === undefined || signature === undefined || rest.length) {
    return notJws;
  }
  let protectedHeader: { alg?: unknown; kid?: unknown };
  let payloadText: string;
  let signatureBytes: Uint8Array<ArrayBuffer>;
  try {
    protectedHeader = JSON.parse(new TextDecoder().decode(fromBase64Url(header)));
    payloadText = new TextDecoder().decode(fromBase64Url(payload));
    signatureBytes = fromBase64Url(signature);
  } catch {
    return notJws;
  }
  if (typeof protectedHeader !== 'object' || protectedHeader === null) {
    return notJws;
  }
  const { alg, kid } = protectedHeader;
  if (alg !== 'EdDSA') {
    return { ok: false, reason: `${what} is signed with ${String(alg)}, not EdDSA` };
  }
  if (typeof kid !== 'string') {
    return { ok: false, reason: `${what}'s signature names no key (no kid)` };
  }
  const candidates = keysOf(stewardKey);
  if (!candidates) {
    return {
      ok: false,
      reason: 'the steward key is neither a JWK nor a key set ({keys}) as /.well-known/ocss/keys',
    };
  }
  // A key set picks by kid; a single JWK without a kid is the one its holder chose to trust.
  const jwk =
    candidates.find((key) => key?.kid === kid) ??
    candidates.find((key) => key !== null && typeof key === 'object' && key.kid === undefined);
  if (!jwk) {
    return {
      ok: false,
      reason: `${what} is signed by key ${kid}, which is not among the steward keys given`,
    };
  }
  if (payloadText !== jcsOf(statement)) {
    return { ok: false, reason: `${what}'s fields are not what its signature covers` };
  }
  let key: Awaited<ReturnType<typeof crypto.subtle.importKey>>;
  try {
    // Only the key's members: WebCrypto refuses a JWK whose `alg` or `use` it reads otherwise.
    key = await crypto.subtle.importKey(
      'jwk',
      { kty: jwk.kty, crv: jwk.crv, x: jwk.x },
      { name: 'Ed25519' },
      false,
      ['verify'],
    );
  } catch (error) {
    if ((error as Error)?.name === 'NotSupportedError') {
      return {
        skipped: `this runtime's WebCrypto has no Ed25519: ${what}'s signature was not checked`,
      };
    }
    return { ok: false, reason: 'the steward key is not an Ed25519 public JWK' };
  }
  const signed = new TextEncoder().encode(`${header}.${payload}`);
  return (await crypto.subtle.verify({ name: 'Ed25519' }, key, signatureBytes, signed))
    ? { ok: true, kid }
    : { ok: false, reason: `${what}'s signature does not verify with the steward key` };
}
