// Reading usage back: any member of the org, the last `days` days, newest hour first.
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { OrgsService } from '../orgs/service.js';
import { listUsage, type UsageRow } from './store.js';

const DAY_MS = 86_400_000;

export function createUsageService(deps: {
  db: Db;
  clock: Clock;
  orgs: Pick<OrgsService, 'requireMember'>;
}) {
  return {
    async readUsage(
      userId: string,
      orgId: string,
      query: { days: number; keyId?: string },
    ): Promise<UsageRow[]> {
      await deps.orgs.requireMember(orgId, userId);
      const since = new Date(deps.clock.now().getTime() - query.days * DAY_MS);
      return listUsage(deps.db, { orgId, since, keyId: query.keyId });
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
