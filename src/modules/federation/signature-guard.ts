// The door of the signed OCSS routes (CONTRACT.md §9): verifies the RFC 9421 signature of a
// request against the trust list, and binds the request to the entry that signed it. A
// suspended or revoked entry fails as standing_failure / authority_binding. Runs before
// body validation, so an unsigned request is 401 whatever its body.
import { createPublicKey } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { NonceStore } from '../../ocss/nonce-store.js';
import { OcssError } from '../../ocss/ocss-error.js';
import { verifySignedRequest } from '../../ocss/verify-signed-request.js';
import { type EntryRow, findEntryByKeyId } from './entries-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The trust-list entry whose key signed this request (signed routes only). */
    ocssSigner: EntryRow | null;
  }
}

export type SignatureGuard = (request: FastifyRequest) => Promise<void>;

export function createSignatureGuard(deps: {
  db: Db;
  clock: Clock;
  /** `@target-uri` is what the signer called: PUBLIC_BASE_URL + path and query. */
  publicBaseUrl: string;
  nonces: NonceStore;
}): SignatureGuard {
  return async (request) => {
    let signer: EntryRow | undefined;
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
        resolveKey: async (keyid) => {
          signer = await findEntryByKeyId(deps.db, keyid);
          return (
            signer && {
              publicKey: createPublicKey({ key: { ...signer.public_jwk }, format: 'jwk' }),
            }
          );
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
    request.callerKey = `ocss:${signer.key_id}`;
  };
}
