// An audit chain recomputed the way anyone holding its entries can (CONTRACT.md §12.1), with
// node:crypto and `canonicalize`, independent of Haven's code and of the SDK's verifier.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface ChainEntry {
  id: string;
  seq: number;
  occurred_at: string;
  family_id?: string | null;
  actor: { type: string; id: string; label: string };
  action: string;
  target: { type: string; id: string };
  request_id: string | null;
  changes: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** Whether `entries` (oldest first) hash and link up, from the first one's `prev_hash`. */
export function chainHolds(entries: readonly ChainEntry[]): boolean {
  let prev = entries[0]?.prev_hash;
  for (const entry of entries) {
    const { hash, ...body } = entry;
    const expected = createHash('sha256')
      .update(canonicalize(body) as string)
      .digest('hex');
    if (expected !== hash || entry.prev_hash !== prev) {
      return false;
    }
    prev = hash;
  }
  return true;
}
