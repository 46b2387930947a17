// Sandbox failure simulation, Plaid-style: a developer arms a failure for a (family,
// platform) and the next enforcement runs on that platform fail, so that `partial` and
// `failed` jobs (and their webhooks) can be produced on demand. Sandbox deployments only.
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { NotFoundError } from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import { REDACTED } from '../audit/changes.js';
import type { FamiliesService } from '../families/service.js';
import { findPlatform } from '../platforms/catalog.js';
import { armFailure, clearFailure } from './store.js';

const DEFAULT_MESSAGE = 'platform unavailable';

export function createSandboxFailures(deps: {
  clock: Clock;
  writes: ChangeRunner;
  families: Pick<FamiliesService, 'requireFamily'>;
}) {
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
      return deps.writes.run(async (change) => {
        const armed = await armFailure(change.trx, {
          family_id: input.family_id,
          platform_id: platformId,
          remaining: input.times ?? null,
          message: input.message?.trim() || DEFAULT_MESSAGE,
          created_at: deps.clock.now(),
        });
        change.audit({
          familyId: input.family_id,
          actor: actorOf(principal),
          action: 'sandbox_failure.armed',
          target: { type: 'platform', id: platformId },
          // The message is the caller's free text: named, not kept.
          changes: { times: armed.remaining, message: REDACTED },
        });
        return armed;
      });
    },

    /** Idempotent: clearing what is not armed is a success too. */
    async clear(principal: Principal, platformId: string, familyId: string): Promise<void> {
      await deps.families.requireFamily(principal, familyId, 'write');
      await deps.writes.run(async (change) => {
        if (!(await clearFailure(change.trx, familyId, platformId))) {
          return; // nothing was armed: nothing changed, no entry
        }
        change.audit({
          familyId,
          actor: actorOf(principal),
          action: 'sandbox_failure.cleared',
          target: { type: 'platform', id: platformId },
          changes: {},
        });
      });
    },
  };
}
