// Metering that costs the request path nothing: counts and last-used stamps are added up in
// memory and flushed in one transaction every few seconds, and on shutdown.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/connect.js';
import {
  addUsage,
  type LastUse,
  stampKeysUsed,
  stampMcpTokensUsed,
  type UsageIncrement,
} from './store.js';

export const FLUSH_EVERY_MS = 5_000;
const HOUR_MS = 3_600_000;

/** `/api/v1/developer/families/:familyID/children` -> `/api/v1/developer/families/{familyID}/children` */
export function endpointPattern(routeUrl: string): string {
  return routeUrl.replace(/:(\w+)/g, '{$1}');
}

export function createUsageRecorder(deps: { db: Db; log: FastifyBaseLogger }) {
  let counts = new Map<string, UsageIncrement>();
  let keyUses = new Map<string, LastUse>();
  let tokenUses = new Map<string, LastUse>();
  let flushing: Promise<void> = Promise.resolve();

  const latest = (uses: Map<string, LastUse>, use: LastUse) => {
    const known = uses.get(use.id);
    if (!known || known.at < use.at) {
      uses.set(use.id, use);
    }
  };

  async function write(
    batch: Map<string, UsageIncrement>,
    keys: Map<string, LastUse>,
    tokens: Map<string, LastUse>,
  ): Promise<void> {
    await deps.db.transaction().execute(async (trx) => {
      await addUsage(trx, [...batch.values()]);
      await stampKeysUsed(trx, [...keys.values()]);
      await stampMcpTokensUsed(trx, [...tokens.values()]);
    });
  }

  function restore(
    batch: Map<string, UsageIncrement>,
    keys: Map<string, LastUse>,
    tokens: Map<string, LastUse>,
  ): void {
    // The database did not take them: keep them for the next flush, nothing is lost.
    for (const [id, row] of batch) {
      const now = counts.get(id);
      if (now) {
        now.status_2xx += row.status_2xx;
        now.status_4xx += row.status_4xx;
        now.status_5xx += row.status_5xx;
        now.total_requests += row.total_requests;
      } else {
        counts.set(id, row);
      }
    }
    for (const use of keys.values()) {
      latest(keyUses, use);
    }
    for (const use of tokens.values()) {
      latest(tokenUses, use);
    }
  }

  return {
    recordKeyRequest(input: {
      keyId: string;
      orgId: string;
      endpoint: string;
      status: number;
      at: Date;
      ip: string;
    }): void {
      const hour = new Date(Math.floor(input.at.getTime() / HOUR_MS) * HOUR_MS);
      const id = `${input.keyId}\n${hour.getTime()}\n${input.endpoint}`;
      let row = counts.get(id);
      if (!row) {
        row = {
          key_id: input.keyId,
          org_id: input.orgId,
          hour,
          endpoint: input.endpoint,
          status_2xx: 0,
          status_4xx: 0,
          status_5xx: 0,
          total_requests: 0,
        };
        counts.set(id, row);
      }
      row.total_requests++;
      if (input.status >= 200 && input.status < 300) {
        row.status_2xx++;
      } else if (input.status >= 400 && input.status < 500) {
        row.status_4xx++;
      } else if (input.status >= 500) {
        row.status_5xx++;
      }
      latest(keyUses, { id: input.keyId, at: input.at, ip: input.ip });
    },

    recordTokenUse(tokenId: string, at: Date, ip: string): void {
      latest(tokenUses, { id: tokenId, at, ip });
    },

    /** Writes what was counted so far; flushes never overlap. */
    flush(): Promise<void> {
      flushing = flushing.then(async () => {
        if (counts.size === 0 && keyUses.size === 0 && tokenUses.size === 0) {
          return;
        }
        const batch = counts;
        const keys = keyUses;
        const tokens = tokenUses;
        counts = new Map();
        keyUses = new Map();
        tokenUses = new Map();
        try {
          await write(batch, keys, tokens);
        } catch (error) {
          restore(batch, keys, tokens);
          deps.log.warn({ err: error }, 'usage flush failed; counts kept for the next flush');
        }
      });
      return flushing;
    },
  };
}

export type UsageRecorder = ReturnType<typeof createUsageRecorder>;
