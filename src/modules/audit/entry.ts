// An audit entry as the API shows it and as its hash covers it (CONTRACT.md §12.1): `hash` is
// the lowercase hex SHA-256 of the RFC 8785 (JCS) serialization of every other field, and
// `prev_hash` the previous entry's `hash` in the chain (64 zeros for the first). The SDK's
// `auditLog.verify` recomputes the same in a browser.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AuditActorType } from './actor.js';

export const GENESIS_HASH = '0'.repeat(64);

export interface AuditEntry {
  id: string;
  seq: number;
  occurred_at: string;
  family_id: string | null;
  org_id: string | null;
  actor: { type: AuditActorType; id: string; label: string };
  action: string;
  target: { type: string; id: string };
  request_id: string | null;
  changes: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

export function entryHash(entry: Omit<AuditEntry, 'hash'>): string {
  const text = canonicalize(entry);
  if (text === undefined) {
    throw new Error('an audit entry has no JCS form');
  }
  return createHash('sha256').update(text).digest('hex');
}
