// Metering that costs the request path nothing: counts and last-used stamps are added up in
// memory and flushed in one transaction every few seconds, and on shutdown.
import type { FastifyBaseLogger } from 'fastify';
import { createWriteBehind } from '../../cache/write-behind.js';
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

/** Route patterns seen, converted once each (there are as many as routes, not requests). */
const patterns = new Map<string, string>();

/** `/api/v1/developer/families/:familyID/children` -> `/api/v1/developer/families/{familyID}/children` */
export function endpointPattern(routeUrl: string): string {
  let pattern = patterns.get(routeUrl);
  if (pattern === undefined) {
    pattern = routeUrl.replace(/:(\w+)/g, '{$1}');
    patterns.set(routeUrl, pattern);
  }
  return pattern;
}

/** One buffered item: a count row to add, or the latest use of a key or an MCP token. */
type Pending = { kind: 'count'; row: UsageIncrement } | { kind: 'key' | 'token'; use: LastUse };

function merge(older: Pending, newer: Pending): Pending {
  if (older.kind === 'count' && newer.kind === 'count') {
    older.row.status_2xx += newer.row.status_2xx;
    older.row.status_4xx += newer.row.status_4xx;
    older.row.status_5xx += newer.row.status_5xx;
    older.row.total_requests += newer.row.total_requests;
    return older;
  }
  // Ids carry their kind, so both are last uses of one key or token: the later one wins.
  return older.kind !== 'count' && newer.kind !== 'count' && older.use.at > newer.use.at
    ? older
    : newer;
}

/** The ids one key's request is held under, for one endpoint and hour. */
interface HeldIds {
  hour: number;
  count: string;
  use: string;
}

export function createUsageRecorder(deps: { db: Db; log: FastifyBaseLogger }) {
  // Ids built once per endpoint, key and hour rather than concatenated per request: a fresh
  // string is flattened and hashed again for every map lookup (~2 % of the children read's
  // CPU), a kept one carries its hash. Dropped at every write, so keys no longer used leave.
  let heldIds = new Map<string, Map<string, HeldIds>>();
  function idsOf(keyId: string, endpoint: string, hour: number): HeldIds {
    let byKey = heldIds.get(endpoint);
    if (!byKey) {
      byKey = new Map();
      heldIds.set(endpoint, byKey);
    }
    let ids = byKey.get(keyId);
    if (ids?.hour !== hour) {
      ids = { hour, count: `count\n${keyId}\n${hour}\n${endpoint}`, use: `key\n${keyId}` };
      byKey.set(keyId, ids);
    }
    return ids;
  }

  const pending = createWriteBehind<Pending>({
    what: 'usage',
    everyMs: FLUSH_EVERY_MS,
    flushAt: 5_000,
    maxEntries: 100_000,
    merge,
    write: (batch) => {
      heldIds = new Map();
      return deps.db.transaction().execute(async (trx) => {
        const items = [...batch.values()];
        const uses = (kind: 'key' | 'token') =>
          items.flatMap((item) => (item.kind === kind ? [item.use] : []));
        await addUsage(
          trx,
          items.flatMap((item) => (item.kind === 'count' ? [item.row] : [])),
        );
        await stampKeysUsed(trx, uses('key'));
        await stampMcpTokensUsed(trx, uses('token'));
      });
    },
    log: deps.log,
  });

  return {
    recordKeyRequest(input: {
      keyId: string;
      orgId: string;
      endpoint: string;
      status: number;
      at: Date;
      ip: string;
    }): void {
      const hour = Math.floor(input.at.getTime() / HOUR_MS) * HOUR_MS;
      const ok = input.status >= 200 && input.status < 300 ? 1 : 0;
      const client = input.status >= 400 && input.status < 500 ? 1 : 0;
      const failed = input.status >= 500 ? 1 : 0;
      // Every request of a key adds to a count and a last use already held, mostly: those
      // are folded into in place, and new values are built only for a new id (hot path).
      const ids = idsOf(input.keyId, input.endpoint, hour);
      const counted = pending.held(ids.count);
      if (counted?.kind === 'count') {
        counted.row.status_2xx += ok;
        counted.row.status_4xx += client;
        counted.row.status_5xx += failed;
        counted.row.total_requests += 1;
      } else {
        pending.add(ids.count, {
          kind: 'count',
          row: {
            key_id: input.keyId,
            org_id: input.orgId,
            hour: new Date(hour),
            endpoint: input.endpoint,
            status_2xx: ok,
            status_4xx: client,
            status_5xx: failed,
            total_requests: 1,
          },
        });
      }
      const used = pending.held(ids.use);
      if (used?.kind === 'key') {
        // The later use wins, as in `merge`.
        if (input.at >= used.use.at) {
          used.use.at = input.at;
          used.use.ip = input.ip;
        }
      } else {
        pending.add(ids.use, { kind: 'key', use: { id: input.keyId, at: input.at, ip: input.ip } });
      }
    },

    recordTokenUse(tokenId: string, at: Date, ip: string): void {
      pending.add(`token\n${tokenId}`, { kind: 'token', use: { id: tokenId, at, ip } });
    },

    /** Writes what was counted so far; flushes never overlap. */
    flush: () => pending.flush(),
    close: () => pending.close(),
  };
}

export type UsageRecorder = ReturnType<typeof createUsageRecorder>;
