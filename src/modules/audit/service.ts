// Reading the audit log (CONTRACT.md §12.1): a family's chain for its members, an org's for
// its owners and admins, and a family's head signed by the steward key.
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { BadRequestError } from '../../http/errors.js';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import type { FamiliesService } from '../families/service.js';
import type { OrgsService } from '../orgs/service.js';
import { type AuditEntry, GENESIS_HASH } from './entry.js';
import { signStatement } from './signed-statement.js';
import { entryOf, findChainTip, listChain } from './store.js';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

export interface AuditPage {
  entries: AuditEntry[];
  next_before: string | null;
}

export function createAuditService(deps: {
  db: Db;
  clock: Clock;
  families: Pick<FamiliesService, 'requireFamily'>;
  orgs: Pick<OrgsService, 'requireManager'>;
  steward: Ed25519SigningKey;
}) {
  const { db } = deps;

  async function page(chainId: string, limit: number, before: string | undefined) {
    const rows = await listChain(db, chainId, limit + 1, before);
    if (!rows) {
      throw new BadRequestError('before must be the id of an entry of this audit log');
    }
    const entries = rows.slice(0, limit).map(entryOf);
    return {
      entries,
      next_before: rows.length > limit ? (entries.at(-1)?.id ?? null) : null,
    } satisfies AuditPage;
  }

  return {
    async familyLog(
      principal: Principal,
      familyId: string,
      limit = DEFAULT_PAGE,
      before?: string,
    ): Promise<AuditPage> {
      await deps.families.requireFamily(principal, familyId, 'read');
      return page(familyId, limit, before);
    },

    async orgLog(userId: string, orgId: string, limit = DEFAULT_PAGE, before?: string) {
      await deps.orgs.requireManager(orgId, userId);
      return page(orgId, limit, before);
    },

    /** The family's chain as of now, signed: `entries` is the head's `seq` (0: empty). */
    async familyHead(principal: Principal, familyId: string) {
      await deps.families.requireFamily(principal, familyId, 'read');
      const tip = await findChainTip(db, familyId);
      const statement = {
        family_id: familyId,
        entries: tip?.seq ?? 0,
        head_hash: tip?.hash ?? GENESIS_HASH,
        signed_at: deps.clock.now().toISOString(),
      };
      return { ...statement, signature: await signStatement(deps.steward, statement) };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
