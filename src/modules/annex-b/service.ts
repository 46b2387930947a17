// Annex B editions (CONTRACT.md §9): the rule registry frozen as numbered, immutable,
// content-addressed JSON artifacts. Freezing is an operator command; reading is public.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../http/errors.js';
import { RULE_REGISTRY, type RuleCategory } from '../rules/registry.js';
import {
  type EditionSummary,
  findEdition,
  findLatestEditionNumber,
  insertEdition,
  listEditions,
  lockEditionNumbers,
} from './store.js';

/** The column is a PostgreSQL integer: a larger number can never have been frozen. */
const MAX_EDITION = 2_147_483_647;

export interface ServedEdition {
  artifact: string;
  /** Strong validator: the artifact's hash, quoted as HTTP wants it. */
  etag: string;
}

export type { EditionSummary };

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** RFC 8785 (JCS): the same edition always has the same bytes, hence the same hash. */
export function buildArtifact(
  edition: number,
  frozenAt: Date,
  rules: readonly RuleCategory[],
): string {
  const artifact = canonicalize({ edition, frozen_at: frozenAt.toISOString(), rules });
  if (artifact === undefined) {
    throw new Error('the rule registry cannot be serialised as JSON');
  }
  return artifact;
}

export function createAnnexBService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  // An edition never changes once frozen, so after its first read it is served from here.
  // Misses are not remembered: a number not frozen now may be frozen by the next request.
  const served = new Map<number, ServedEdition>();

  return {
    /** Freezes the current registry as the next edition (1 when none is frozen yet). */
    async freeze(): Promise<EditionSummary> {
      return db.transaction().execute(async (trx) => {
        await lockEditionNumbers(trx);
        const edition = (await findLatestEditionNumber(trx)) + 1;
        // Read under the lock, so a later edition never carries an earlier time.
        const frozenAt = clock.now();
        const artifact = buildArtifact(edition, frozenAt, RULE_REGISTRY);
        const sha256 = sha256Hex(artifact);
        await insertEdition(trx, { edition, frozen_at: frozenAt, artifact, sha256 });
        return { edition, frozen_at: frozenAt, sha256 };
      });
    },

    list(): Promise<EditionSummary[]> {
      return listEditions(db);
    },

    async readEdition(edition: number): Promise<ServedEdition> {
      const cached = served.get(edition);
      if (cached) {
        return cached;
      }
      const row =
        Number.isInteger(edition) && edition >= 1 && edition <= MAX_EDITION
          ? await findEdition(db, edition)
          : undefined;
      if (!row) {
        throw new NotFoundError('edition not frozen');
      }
      const entry = { artifact: row.artifact, etag: `"sha256:${row.sha256}"` };
      served.set(edition, entry);
      return entry;
    },
  };
}

export type AnnexBService = ReturnType<typeof createAnnexBService>;
