// `verifyErasureReceipt` (`haven.erasures.verify`): proof, where its holder is, of what an
// erasure removed and released (CONTRACT.md §12.3). A completed receipt carries a compact JWS
// by the steward key over the RFC 8785 (JCS) form of every field but `signature`; a receipt
// edited after it was signed, signed by another key, or not completed yet is not valid.
import type { Result } from './operation-types.js';
import { checkStewardSignature, type StewardKeys } from './steward-signature.js';

/** A receipt as `haven.erasures.get` answers it. */
export type ErasureReceipt = Result<'getErasure'>;

export interface ErasureReceiptValid {
  valid: true;
  /** The steward key that signed it (its `kid` at /.well-known/ocss/keys). */
  kid: string;
}

export interface ErasureReceiptInvalid {
  valid: false;
  reason: string;
}

export type ErasureReceiptVerification = ErasureReceiptValid | ErasureReceiptInvalid;

export interface VerifyErasureReceiptOptions {
  /** The steward's public key, or the whole `/.well-known/ocss/keys` answer (`{keys}`). */
  stewardKey: StewardKeys;
}

function invalid(reason: string): ErasureReceiptInvalid {
  return { valid: false, reason };
}

/**
 * Checks an erasure receipt: completed (`completed_at` set and a signature), its JWS EdDSA by
 * a key among `stewardKey` (picked by `kid`), the signature valid, and its payload the JCS form
 * of the receipt without `signature`. Never throws for a bad receipt: it says why.
 */
export async function verifyErasureReceipt(
  receipt: ErasureReceipt,
  stewardKey: StewardKeys,
): Promise<ErasureReceiptVerification> {
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) {
    return invalid('not an erasure receipt (an object as GET /erasures/{id} answers)');
  }
  const { signature, ...statement } = receipt;
  if (statement.completed_at === null || statement.completed_at === undefined) {
    return invalid(
      'the erasure is not completed yet (completed_at is null): its receipt is signed once every release has ended; read it again later',
    );
  }
  if (signature === null || signature === undefined) {
    return invalid('the receipt is completed but carries no signature');
  }
  const check = await checkStewardSignature(signature, statement, stewardKey, 'the receipt');
  if ('skipped' in check) {
    // Nothing was proven: a receipt is valid only when its signature was checked.
    return invalid(check.skipped);
  }
  return check.ok ? { valid: true, kid: check.kid } : invalid(check.reason);
}
