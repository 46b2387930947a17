// An erasure receipt as GET /erasures/{id} shows it (CONTRACT.md §12.3), and its signature: a
// compact JWS by the steward key over the JCS form of every other field, made once the
// receipt is complete, so its holder can prove later what Haven erased and released.
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import { signStatement } from '../audit/signed-statement.js';
import type { ReceiptRow, ReleaseOutcome } from './store.js';

export interface ErasureReceipt {
  id: string;
  subject: { type: ReceiptRow['subject_type']; id: string };
  requested_at: string;
  completed_at: string | null;
  erased: Record<string, number>;
  releases: ReleaseOutcome[];
  signature: string | null;
}

type Statement = Omit<ErasureReceipt, 'signature'>;

function statementOf(row: ReceiptRow): Statement {
  return {
    id: row.id,
    subject: { type: row.subject_type, id: row.subject_id },
    requested_at: row.requested_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    erased: row.erased,
    releases: row.releases,
  };
}

export function presentReceipt(row: ReceiptRow): ErasureReceipt {
  return { ...statementOf(row), signature: row.signature };
}

/** The receipt completed at `completedAt` with these releases, and signed. */
export async function completed(
  steward: Ed25519SigningKey,
  row: ReceiptRow,
  releases: ReleaseOutcome[],
  completedAt: Date,
): Promise<ReceiptRow> {
  const done = { ...row, releases, completed_at: completedAt };
  return { ...done, signature: await signStatement(steward, statementOf(done)) };
}
