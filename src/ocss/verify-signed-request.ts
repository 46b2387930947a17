// RFC 9421 verification of a signed OCSS request (CONTRACT §9 "Signed requests"). Every
// outcome is either the verified signature or an OcssError:
//   malformed          OCSS-Spec-Version missing or not the one this server speaks
//   signature_invalid  signature fields missing, unparsable or more than one; keyid or
//                      created missing; alg not ed25519; a required component not covered;
//                      created outside the window or expires passed; a covered component
//                      absent; a wrong signature; Content-Digest missing or not the body's
//   unknown_key        keyid not resolvable to a key
//   replay             nonce already used within the window
//   unavailable        the key lookup or the nonce store failed
// The checks run cheapest first and the nonce is claimed last, so nothing but a request that
// passed every other check can use up a nonce.
import type { KeyObject } from 'node:crypto';
import { checkContentDigest } from './content-digest.js';
import { verifyBytes } from './ed25519-key.js';
import { combinedFields } from './http-fields.js';
import type { NonceStore } from './nonce-store.js';
import { OcssError } from './ocss-error.js';
import { buildSignatureBase, type SignedRequest } from './signature-base.js';
import { parseReceivedSignature, type ReceivedSignature } from './signature-input.js';

export const OCSS_SPEC_VERSION = 'OCSS-v1.0-pre';
export const DEFAULT_REQUIRED_COMPONENTS = [
  '@method',
  '@target-uri',
  'content-digest',
  'ocss-spec-version',
] as const;
export const DEFAULT_MAX_AGE_SECONDS = 300;

export interface ResolvedKey {
  publicKey: KeyObject;
}

export interface VerifySignedRequestOptions {
  now: Date;
  /** The key of a keyid, or undefined when it names none (→ `unknown_key`). */
  resolveKey(keyid: string): Promise<ResolvedKey | undefined> | ResolvedKey | undefined;
  /**
   * Where the nonce is claimed, last of all checks. `null`: the caller claims the returned
   * nonce itself with claimNonce, after checks of its own (a fast path claims it only once
   * it knows it will answer).
   */
  nonces: NonceStore | null;
  /** Components the signature must cover; default DEFAULT_REQUIRED_COMPONENTS. */
  requiredComponents?: readonly string[];
  /** |now − created| must not exceed it; default 300. */
  maxAgeSeconds?: number;
  /**
   * The OCSS-Spec-Version the request must carry; default OCSS_SPEC_VERSION. `null` skips
   * the check (for non-OCSS vectors such as RFC 9421's own); `undefined` means the default,
   * so a forgotten option can never switch the check off.
   */
  specVersion?: string | null;
  /** Content-Digest must be present, covered and match the body; default true. */
  requireDigest?: boolean;
}

export interface VerifiedSignature {
  keyid: string;
  label: string;
  created: number;
  nonce?: string;
  components: string[];
}

export type { SignedRequest };

export async function verifySignedRequest(
  request: SignedRequest,
  options: VerifySignedRequestOptions,
): Promise<VerifiedSignature> {
  try {
    return await verify(request, options);
  } catch (error) {
    if (error instanceof OcssError) {
      throw error;
    }
    // Whatever else a hostile request manages to trip over fails closed, as a bad signature.
    throw OcssError.signatureInvalid('the signature could not be verified');
  }
}

async function verify(
  request: SignedRequest,
  options: VerifySignedRequestOptions,
): Promise<VerifiedSignature> {
  const specVersion = options.specVersion === undefined ? OCSS_SPEC_VERSION : options.specVersion;
  const requireDigest = options.requireDigest ?? true;
  const maxAgeSeconds = options.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  const required = options.requiredComponents ?? DEFAULT_REQUIRED_COMPONENTS;

  // The fields are read once: the checks and the signature base all look them up here.
  const fields = combinedFields(request.headers);
  const received = parseReceivedSignature(fields.get('signature-input'), fields.get('signature'));
  // An unsigned request is a signature failure (401) whatever else it lacks; a signed one
  // must then speak this protocol version before anything else is read.
  if (specVersion !== null) {
    const sent = fields.get('ocss-spec-version');
    if (sent !== specVersion) {
      throw OcssError.malformed(
        sent === undefined
          ? `OCSS-Spec-Version is required: send ${specVersion}`
          : `OCSS-Spec-Version is not supported: send ${specVersion}`,
      );
    }
  }

  const { keyid, created } = requireParameters(received);
  requireCoverage(received, required, requireDigest);
  requireFreshness(received, options.now, maxAgeSeconds);

  const publicKey = await resolvePublicKey(options, keyid);
  const base = buildSignatureBase(request, received.components, received.signatureParams, fields);
  if (!(await verifyBytes(publicKey, Buffer.from(base, 'utf8'), received.signature))) {
    throw OcssError.signatureInvalid('the signature does not verify');
  }

  const contentDigest = fields.get('content-digest');
  if (contentDigest !== undefined) {
    // Checked whenever sent, required or not: a digest that is not the body's is never fine.
    checkContentDigest(contentDigest, request.body);
  } else if (requireDigest) {
    throw OcssError.signatureInvalid('Content-Digest is required');
  }

  const { nonce } = received.parameters;
  if (nonce !== undefined && options.nonces !== null) {
    await claimNonce(options.nonces, { keyid, nonce, created }, maxAgeSeconds);
  }
  return {
    keyid,
    label: received.label,
    created,
    ...(nonce === undefined ? {} : { nonce }),
    components: received.components,
  };
}

function requireParameters(received: ReceivedSignature): { keyid: string; created: number } {
  const { keyid, created, alg } = received.parameters;
  if (keyid === undefined || keyid === '') {
    throw OcssError.signatureInvalid('the signature has no keyid');
  }
  if (created === undefined) {
    throw OcssError.signatureInvalid('the signature has no created time');
  }
  if (alg !== undefined && alg !== 'ed25519') {
    throw OcssError.signatureInvalid(`algorithm ${alg} is not accepted: use ed25519`);
  }
  return { keyid, created };
}

function requireCoverage(
  received: ReceivedSignature,
  required: readonly string[],
  requireDigest: boolean,
): void {
  const mustCover = requireDigest ? [...required, 'content-digest'] : required;
  for (const component of mustCover) {
    if (!received.components.includes(component.toLowerCase())) {
      throw OcssError.signatureInvalid(`the signature must cover "${component.toLowerCase()}"`);
    }
  }
}

function requireFreshness(received: ReceivedSignature, now: Date, maxAgeSeconds: number): void {
  const nowMs = now.getTime();
  const { created, expires } = received.parameters;
  if (created === undefined || Math.abs(nowMs - created * 1000) > maxAgeSeconds * 1000) {
    throw OcssError.signatureInvalid(
      `the signature was not created within ${maxAgeSeconds} s of now`,
    );
  }
  if (expires !== undefined && nowMs > expires * 1000) {
    throw OcssError.signatureInvalid('the signature has expired');
  }
}

async function resolvePublicKey(
  options: VerifySignedRequestOptions,
  keyid: string,
): Promise<KeyObject> {
  let resolved: ResolvedKey | undefined;
  try {
    resolved = await options.resolveKey(keyid);
  } catch (error) {
    if (error instanceof OcssError) {
      throw error;
    }
    throw OcssError.unavailable('the signing key could not be looked up');
  }
  if (resolved === undefined) {
    throw OcssError.unknownKey(`keyid ${keyid} is not on the trust list`);
  }
  if (resolved.publicKey.asymmetricKeyType !== 'ed25519') {
    throw OcssError.signatureInvalid(`keyid ${keyid} is not an Ed25519 key`);
  }
  return resolved.publicKey;
}

/**
 * Claims a verified signature's nonce (`replay` when it was used, `unavailable` when the
 * store fails); a signature without one passes.
 */
export async function claimNonce(
  nonces: NonceStore,
  { keyid, nonce, created }: Pick<VerifiedSignature, 'keyid' | 'nonce' | 'created'>,
  maxAgeSeconds = DEFAULT_MAX_AGE_SECONDS,
): Promise<void> {
  if (nonce === undefined) {
    return;
  }
  // The signature stays acceptable until created + max age, so the nonce is held that long.
  const expiresAt = new Date((created + maxAgeSeconds) * 1000);
  let first: boolean;
  try {
    first = await nonces.claim(keyid, nonce, expiresAt);
  } catch {
    throw OcssError.unavailable('the nonce store is unavailable');
  }
  if (!first) {
    throw OcssError.replay('the nonce has already been used');
  }
}
