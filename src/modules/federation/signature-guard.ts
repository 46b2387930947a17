// The door of the signed OCSS routes (CONTRACT.md §9): verifies the RFC 9421 signature of a
// request against the served trust list, and binds the request to the entry that signed
// it. A suspended or revoked entry fails as standing_failure / authority_binding (on every
// instance within a second of the change: the time the list takes to reach them). Runs
// before body validation, so an unsigned request is 401 whatever its body.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.js';
import type { NonceStore } from '../../ocss/nonce-store.js';
import { OcssError } from '../../ocss/ocss-error.js';
import { type VerifiedSignature, verifySignedRequest } from '../../ocss/verify-signed-request.js';
import type { PublishedEntry, TrustListService } from './trust-list-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The trust-list entry whose key signed this request (signed routes only). */
    ocssSigner: PublishedEntry | null;
  }
}

export type SignatureGuard = (request: FastifyRequest) => Promise<void>;

/** A signed request as the verifier reads it; `url` is the path and query received. */
export interface SignedInput {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
}

/**
 * The entry whose key signed the request, active on the trust list, or an OcssError. With
 * `nonces: null` a nonce is not claimed: the caller claims `verified.nonce` (claimNonce).
 */
export type SignerCheck = (
  input: SignedInput,
  nonces: NonceStore | null,
) => Promise<{ signer: PublishedEntry; verified: VerifiedSignature }>;

export interface SignerCheckDeps {
  /** Keys come from the served trust list: a signed request costs no database work. */
  trustList: Pick<TrustListService, 'entryByKeyId'>;
  clock: Clock;
  /** `@target-uri` is what the signer called: PUBLIC_BASE_URL + path and query. */
  publicBaseUrl: string;
}

export function createSignerCheck(deps: SignerCheckDeps): SignerCheck {
  return async (input, nonces) => {
    let signer: PublishedEntry | undefined;
    const verified = await verifySignedRequest(
      {
        method: input.method,
        targetUri: `${deps.publicBaseUrl}${input.url}`,
        headers: input.headers,
        body: input.body,
      },
      {
        now: deps.clock.now(),
        nonces,
        resolveKey: (keyid) => {
          signer = deps.trustList.entryByKeyId(keyid);
          return signer && { publicKey: signer.publicKey };
        },
      },
    );
    if (!signer) {
      throw OcssError.unknownKey('keyid is not on the trust list');
    }
    if (signer.status !== 'active') {
      throw OcssError.standingFailure('authority_binding', `${signer.did} is ${signer.status}`);
    }
    return { signer, verified };
  };
}

export function createSignatureGuard(deps: SignerCheckDeps & { nonces: NonceStore }): {
  guard: SignatureGuard;
  check: SignerCheck;
} {
  const check = createSignerCheck(deps);
  const guard: SignatureGuard = async (request) => {
    const { signer } = await check(
      { method: request.method, url: request.url, headers: request.headers, body: request.rawBody },
      deps.nonces,
    );
    request.ocssSigner = signer;
    request.callerKey = `ocss:${signer.keyId}`;
  };
  return { guard, check };
}
