// An entry's JCS text with holes where only the database knows the value at the moment it
// appends (docs/decisions.md "One chain per family and per org"): the actor's label, the
// time on the family's clock, the previous hash and the seq. The text is the one `entryHash`
// hashes, cut where each placeholder stands, so the database completes it with the values
// it reads under the chain's lock, and hashes it with the same SHA-256.
import canonicalize from 'canonicalize';
import type { AuditEntry } from './entry.js';

const LABEL = 'haven-audit-hole-label-5b1e';
const AT = 'haven-audit-hole-at-5b1e';
const PREV = 'haven-audit-hole-prev-5b1e';
/** A seq no chain reaches: printed by JCS as these digits. */
const SEQ = 9_007_199_254_740_991;

/** The text between the holes: label (a JSON string), at, prev hash, seq, in JCS key order. */
export type HashFragments = [string, string, string, string, string];

/**
 * The fragments of `entry`'s JCS text around its four holes, or undefined when a placeholder
 * is not found exactly once (a change's value happens to contain one): the caller then
 * hashes in JavaScript instead.
 */
export function hashFragments(
  entry: Omit<AuditEntry, 'hash' | 'seq' | 'occurred_at' | 'prev_hash' | 'actor'> & {
    actor: Omit<AuditEntry['actor'], 'label'>;
  },
): HashFragments | undefined {
  const text = canonicalize({
    ...entry,
    actor: { ...entry.actor, label: LABEL },
    occurred_at: AT,
    prev_hash: PREV,
    seq: SEQ,
  });
  if (text === undefined) {
    return undefined;
  }
  const fragments: string[] = [];
  let rest = text;
  for (const hole of [`"${LABEL}"`, AT, PREV, String(SEQ)]) {
    const parts = rest.split(hole);
    if (parts.length !== 2) {
      return undefined;
    }
    fragments.push(parts[0] as string);
    rest = parts[1] as string;
  }
  fragments.push(rest);
  return fragments as HashFragments;
}
