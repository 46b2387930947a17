// `verifyAuditChain` (`haven.auditLog.verify`): recomputes an audit chain (CONTRACT.md §12.1)
// where its holder is, trusting nothing Haven says about it. Each `hash` must be the
// lowercase hex SHA-256 of the RFC 8785 (JCS) form of the entry without `hash`, each
// `prev_hash` the previous entry's `hash`, `seq` without gaps; a head, when given, must name
// one of the entries by seq and hash, and its signature may be checked against the steward's
// key. WebCrypto only (digest, Ed25519), so it runs in browsers as in Node 20+.
import canonicalize from 'canonicalize';
import type { PageItem, Result } from './operation-types.js';
import { checkStewardSignature, type StewardKeys } from './steward-signature.js';

/** An entry as `haven.auditLog.list` yields it. */
export type AuditEntry = PageItem<'listFamilyAuditLog', 'entries'>;
/** The signed head `haven.auditLog.head` answers. */
export type AuditHead = Result<'getFamilyAuditHead'>;

export interface VerifyAuditChainOptions {
  /** The family's signed head: the entry at `head.entries` must carry `head.head_hash`. */
  head?: AuditHead;
  /**
   * The steward's public key, or the whole `/.well-known/ocss/keys` answer (`{keys}`, the
   * key picked by the signature's `kid`): the head's signature is checked with it.
   */
  stewardKey?: StewardKeys;
}

export interface AuditChainValid {
  valid: true;
  /** How many entries were recomputed. */
  entries: number;
  /** The newest entry's hash (64 zeros when no entry was given). */
  head_hash: string;
  /** With a head: `verified` when the steward key checked its signature, else `unchecked`. */
  signature?: 'verified' | 'unchecked';
  /** Why the head's signature was not checked. */
  note?: string;
}

export interface AuditChainBroken {
  valid: false;
  /** Where the chain breaks: the entry's seq (for a head that does not match, `head.entries`). */
  seq: number | null;
  /** That entry's id, when it was given. */
  id: string | null;
  reason: string;
}

export type AuditChainVerification = AuditChainValid | AuditChainBroken;

/** The `prev_hash` of a chain's first entry (seq 1). */
export const GENESIS_HASH = '0'.repeat(64);

/** What an entry needs to be checked at all; the hash covers every field given. */
interface EntryLike {
  id?: unknown;
  seq?: unknown;
  prev_hash?: unknown;
  hash?: unknown;
  family_id?: unknown;
  org_id?: unknown;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)),
  );
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The hash the entry should carry: of its JCS form without `hash`. */
async function hashOf(entry: EntryLike): Promise<string | undefined> {
  const { hash: _, ...body } = entry;
  const text = canonicalize(body);
  return text === undefined ? undefined : sha256Hex(text);
}

function broken(entry: EntryLike | undefined, seq: number | null, reason: string) {
  return {
    valid: false,
    seq,
    id: typeof entry?.id === 'string' ? entry.id : null,
    reason,
  } satisfies AuditChainBroken;
}

/** The fields of the head its signature covers. */
function statementOf(head: AuditHead) {
  return {
    family_id: head.family_id,
    entries: head.entries,
    head_hash: head.head_hash,
    signed_at: head.signed_at,
  };
}

/**
 * Recomputes an audit chain: `entries` in any order (sorted by seq here), from the first kept
 * entry (a retention purge removes the oldest ones: the first entry's `prev_hash` is taken as
 * the anchor, and must be 64 zeros when its seq is 1). With `head`, the entry at
 * `head.entries` must carry `head.head_hash` and none may be missing up to it (entries newer
 * than the head were written after it was signed); with `stewardKey` too, the head's
 * signature is checked. Never throws on a broken chain: it says where it breaks and why.
 */
export async function verifyAuditChain(
  entries: readonly EntryLike[],
  options: VerifyAuditChainOptions = {},
): Promise<AuditChainVerification> {
  const sorted = [...entries].sort((a, b) => Number(a.seq) - Number(b.seq));
  let previous: EntryLike | undefined;
  for (const entry of sorted) {
    const seq = entry.seq;
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) {
      return broken(entry, null, 'an entry has no valid seq');
    }
    if (typeof entry.hash !== 'string' || typeof entry.prev_hash !== 'string') {
      return broken(entry, seq, 'the entry has no hash or no prev_hash');
    }
    const first = sorted[0];
    if (entry.family_id !== first?.family_id || entry.org_id !== first?.org_id) {
      return broken(entry, seq, 'the entry belongs to another chain than the first entry');
    }
    if (previous === undefined) {
      if (seq === 1 && entry.prev_hash !== GENESIS_HASH) {
        return broken(entry, seq, "the first entry's prev_hash is not 64 zeros");
      }
    } else {
      const before = previous.seq as number;
      if (seq === before) {
        return broken(entry, seq, `two entries have seq ${seq}`);
      }
      if (seq !== before + 1) {
        return broken(
          entry,
          seq,
          `seq ${seq} follows seq ${before}: ${seq - before - 1} entr${seq - before - 1 === 1 ? 'y is' : 'ies are'} missing`,
        );
      }
      if (entry.prev_hash !== previous.hash) {
        return broken(entry, seq, "the entry's prev_hash is not the previous entry's hash");
      }
    }
    if ((await hashOf(entry)) !== entry.hash) {
      return broken(entry, seq, "the entry's hash is not the hash of its content");
    }
    previous = entry;
  }
  const newest = sorted.at(-1);
  const result: AuditChainValid = {
    valid: true,
    entries: sorted.length,
    head_hash: (newest?.hash as string | undefined) ?? GENESIS_HASH,
  };
  const { head, stewardKey } = options;
  if (!head) {
    return result;
  }
  const oldest = sorted[0];
  if (oldest && oldest.family_id !== head.family_id) {
    return broken(undefined, head.entries, 'the head is of another family than the entries');
  }
  if (head.entries === 0) {
    if (head.head_hash !== GENESIS_HASH) {
      return broken(undefined, 0, 'the head counts no entry but its head_hash is not 64 zeros');
    }
    if (oldest && oldest.seq !== 1) {
      return broken(oldest, oldest.seq as number, 'the head counts no entry before this one');
    }
  } else {
    if (!newest || (newest.seq as number) < head.entries) {
      return broken(
        undefined,
        head.entries,
        `the head counts ${head.entries} entries but the newest given is seq ${newest?.seq ?? 'none'}: the newest are missing`,
      );
    }
    const signed = sorted.find((entry) => entry.seq === head.entries);
    if (!signed) {
      return broken(undefined, head.entries, "the head's entry is older than the first given");
    }
    if (signed.hash !== head.head_hash) {
      return broken(signed, head.entries, "the entry's hash is not the head's head_hash");
    }
  }
  if (!stewardKey) {
    return {
      ...result,
      signature: 'unchecked',
      note: "no stewardKey given: the head's signature was not checked (pass /.well-known/ocss/keys)",
    };
  }
  // Its payload must be the JCS form of the head's own fields: a head changed fails too.
  const check = await checkStewardSignature(
    head.signature,
    statementOf(head),
    stewardKey,
    'the head',
  );
  if ('skipped' in check) {
    return {
      ...result,
      signature: 'unchecked',
      note: `${check.skipped} (the chain and the head's hash were)`,
    };
  }
  if (!check.ok) {
    const signed = sorted.find((entry) => entry.seq === head.entries);
    return broken(signed, head.entries, check.reason);
  }
  return { ...result, signature: 'verified' };
}
