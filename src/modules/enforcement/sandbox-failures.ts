// Sandbox failure simulation, Plaid-style: a developer arms a failure for a (family,
// platform) and the next enforcement runs on that platform fail, so that `partial` and
// `failed` jobs (and their webhooks) can be produced on demand. Sandbox deployments only.
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../http/errors.js';
import type { FamiliesService } from '../families/service.js';
import { findPlatform } from '../platforms/catalog.js';
import { armFailure, clearFailure } from './store.js';

const DEFAULT_MESSAGE = 'platform unavailable';

export function createSandboxFailures(deps: {
  db: Db;
  clock: Clock;
  families: Pick<FamiliesService, 'requireFamily'>;
}) {
  const { db } = deps;
  return {
    async arm(
      principal: Principal,
      platformId: string,
      input: { family_id: string; times?: number; message?: string },
    ) {
      await deps.families.requireFamily(principal, input.family_id, 'write');
      // Only catalog platforms have a sandbox adapter to fail; anything else is unsupported.
      if (!findPlatform(platformId)) {
        throw new NotFoundError('platform not found');
      }
      return armFailure(db, {
        family_id: input.family_id,
        platform_id: platformId,
        remaining: input.times ?? null,
        message: input.message?.trim() || DEFAULT_MESSAGE,
        created_at: deps.clock.now(),
      });
    },

    /** Idempotent: clearing what is not armed is a success too. */
    async clear(principal: Principal, platformId: string, familyId: string): Promise<void> {
      await deps.families.requireFamily(principal, familyId, 'write');
      await clearFailure(db, familyId, platformId);
    },
  };
}
