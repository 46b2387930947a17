// The door of the signed OCSS routes (CONTRACT.md §9): verifies the RFC 9421 signature of a
// request against the served trust list, and binds the request to the entry that signed
// it. A suspended or revoked entry fails as standing_failure / authority_binding (on every
// instance within a second of the change: the time the list takes to reach them). Runs
// before body validation, so an unsigned request is 401 whatever its body.
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.js';
import type { NonceStore } from '../../ocss/nonce-store.js';
import { OcssError } from '../../ocss/ocss-error.js';
import { verifySignedRequest } from '../../ocss/verify-signed-request.js';
import type { PublishedEntry, TrustListService } from './trust-list-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The trust-list entry whose key signed this request (signed routes only). */
    ocssSigner: PublishedEntry | null;
  }
}

export type SignatureGuard = (request: FastifyRequest) => Promise<void>;

export function createSignatureGuard(deps: {
  /** Keys come from the served trust list: a signed request costs no database work. */
  trustList: Pick<TrustListService, 'entryByKeyId'>;
  clock: Clock;
  /** `@target-uri` is what the signer called: PUBLIC_BASE_URL + path and query. */
  publicBaseUrl: string;
  nonces: NonceStore;
}): SignatureGuard {
  return async (request) => {
    let signer: PublishedEntry | undefined;
    await verifySignedRequest(
      {
        method: request.method,
        targetUri: `${deps.publicBaseUrl}${request.url}`,
        headers: request.headers,
        body: request.rawBody,
      },
      {
        now: deps.clock.now(),
        nonces: deps.nonces,
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
    request.ocssSigner = signer;
    request.callerKey = `ocss:${signer.keyId}`;
  };
}
