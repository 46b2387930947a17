// RFC 9530 Content-Digest: a structured dictionary of algorithm → byte sequence. Haven
// understands sha-256 and sha-512 only and, being the party that demands the digest, refuses
// a field that offers anything else rather than ignoring it (RFC 9530 lets a recipient
// ignore digests; a field we cannot fully check is not one we vouch for).
import { hash, timingSafeEqual } from 'node:crypto';
import { parseDictionary, serializeDictionary } from 'structured-headers';
import { OcssError } from './ocss-error.js';

const DIGEST_BYTES = { 'sha-256': 32, 'sha-512': 64 } as const;

export type DigestAlgorithm = keyof typeof DIGEST_BYTES;

function isDigestAlgorithm(name: string): name is DigestAlgorithm {
  return Object.hasOwn(DIGEST_BYTES, name);
}

/**
 * What nearly every signer sends: one sha-256 or sha-512 member, padded base64, no
 * parameters. Read without the general parser; its bytes are the ones the parser would give.
 */
const SINGLE_DIGEST = /^(sha-256)=:([A-Za-z0-9+/]{43}=):$|^(sha-512)=:([A-Za-z0-9+/]{86}==):$/;

/** The algorithm → digest pairs of a Content-Digest value; `signature_invalid` otherwise. */
export function parseContentDigest(fieldValue: string): Map<DigestAlgorithm, Buffer> {
  const single = SINGLE_DIGEST.exec(fieldValue);
  if (single) {
    const algorithm = (single[1] ?? single[3]) as DigestAlgorithm;
    return new Map([[algorithm, Buffer.from((single[2] ?? single[4]) as string, 'base64')]]);
  }
  let dictionary: ReturnType<typeof parseDictionary>;
  try {
    dictionary = parseDictionary(fieldValue);
  } catch {
    throw OcssError.signatureInvalid('Content-Digest is not a structured dictionary');
  }
  const digests = new Map<DigestAlgorithm, Buffer>();
  for (const [algorithm, member] of dictionary) {
    if (!isDigestAlgorithm(algorithm)) {
      throw OcssError.signatureInvalid(
        `Content-Digest algorithm ${algorithm} is not supported: use sha-256 or sha-512`,
      );
    }
    const [value] = member;
    if (!(value instanceof ArrayBuffer)) {
      throw OcssError.signatureInvalid(`Content-Digest ${algorithm} is not a byte sequence`);
    }
    const digest = Buffer.from(value);
    if (digest.length !== DIGEST_BYTES[algorithm]) {
      throw OcssError.signatureInvalid(`Content-Digest ${algorithm} has the wrong length`);
    }
    digests.set(algorithm, digest);
  }
  if (digests.size === 0) {
    throw OcssError.signatureInvalid('Content-Digest holds no digest');
  }
  return digests;
}

/** Passes when every digest in the field is the digest of `body` (absent body: zero bytes). */
export function checkContentDigest(fieldValue: string, body: Uint8Array | undefined): void {
  const content = body ?? new Uint8Array(0);
  for (const [algorithm, expected] of parseContentDigest(fieldValue)) {
    if (!timingSafeEqual(digestOf(algorithm, content), expected)) {
      throw OcssError.signatureInvalid(`Content-Digest ${algorithm} does not match the body`);
    }
  }
}

/** The Content-Digest field value for `body`, as a signer sends it. */
export function contentDigestFor(body: Uint8Array, algorithm: DigestAlgorithm = 'sha-256'): string {
  return serializeDictionary(new Map([[algorithm, [digestOf(algorithm, body), new Map()]]]));
}

/**
 * Every signed request's body is digested: the one-shot `crypto.hash` (Node 20.12) skips the
 * Hash object (~1.5 µs against ~2 µs for a bulk read's body on the bench VM).
 */
function digestOf(algorithm: DigestAlgorithm, content: Uint8Array): Buffer {
  return hash(algorithm === 'sha-256' ? 'sha256' : 'sha512', content, 'buffer');
}
