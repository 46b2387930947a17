// Anonymous sandbox sessions (CONTRACT.md §6, spec: Quick setup rule 3). Anyone can invent
// an X-Sandbox-Session value, so sessions are bounded: at most SANDBOX_MAX_SESSIONS exist,
// a session idle for SANDBOX_SESSION_IDLE_DAYS is deleted with its data, and when the cap is
// reached a new session evicts the least recently seen one (never one active in the last
// ten minutes, never `default`). A known session costs no database round trip: the name ->
// user mapping is cached and last-seen times are written in batches.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import { createWriteBehind, laterDate } from '../../cache/write-behind.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { ServiceUnavailableError } from '../../http/errors.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import { createSession, findSessionUser, sweepIdleSessions, writeLastSeen } from './store.js';

export const DEFAULT_SANDBOX_SESSION = 'default';
/** A session seen this recently is never evicted to make room for a new one. */
export const EVICTION_GRACE_MS = 10 * 60_000;
const FLUSH_EVERY_MS = 60_000;
const SWEEP_EVERY_MS = 10 * 60_000;
const EVICTED_CHANNEL = 'sandbox-sessions-evicted';

function sessionLimitReached(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'sandbox session limit reached: reuse an X-Sandbox-Session value or retry later',
  );
}

export interface SandboxSessionLimits {
  max: number;
  idleMs: number;
}

export function createSandboxSessionsService(deps: {
  db: Db;
  clock: Clock;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
  limits: SandboxSessionLimits;
  /** Deleted sessions take their families along, whose ids the sweep does not collect. */
  policyChanges: Pick<PolicyChanges, 'everything'>;
}) {
  const { db, clock, limits } = deps;
  const users = new LRUCache<string, string>({ max: Math.min(limits.max, 50_000) });
  const seen = createWriteBehind<Date>({
    what: 'sandbox session last-seen',
    everyMs: FLUSH_EVERY_MS,
    flushAt: 1_000,
    maxEntries: Math.min(limits.max, 50_000),
    merge: laterDate,
    // A lagging last-seen only delays an eviction.
    write: (batch) => writeLastSeen(db, batch),
    log: deps.log,
  });
  // While the cap is reached and no session can be evicted before this time (epoch ms), a
  // new name is refused from memory: a flood of invented names costs no transaction.
  let fullUntil = 0;

  deps.bus.subscribe(EVICTED_CHANNEL, (message) => {
    for (const name of JSON.parse(message) as string[]) {
      users.delete(name);
    }
  });

  async function forget(names: string[]): Promise<void> {
    if (names.length > 0) {
      deps.log.info({ sessions: names.length }, 'sandbox sessions deleted');
      await deps.bus.publish(EVICTED_CHANNEL, JSON.stringify(names));
      await deps.policyChanges.everything();
    }
  }

  async function sweep(): Promise<void> {
    const idleBefore = new Date(clock.now().getTime() - limits.idleMs);
    await forget(await sweepIdleSessions(db, idleBefore, DEFAULT_SANDBOX_SESSION));
  }

  const sweepTimer = setInterval(
    () => void sweep().catch((error) => deps.log.warn({ err: error }, 'sandbox sweep failed')),
    SWEEP_EVERY_MS,
  ).unref();

  return {
    /** The user behind a session name, created on first use within the bounds above. */
    async resolve(name: string): Promise<string> {
      const now = clock.now();
      const cached = users.get(name);
      const known = cached ?? (await findSessionUser(db, name));
      if (known) {
        if (!cached) {
          users.set(name, known);
        }
        seen.add(name, now);
        return known;
      }
      if (now.getTime() < fullUntil) {
        throw sessionLimitReached();
      }
      // This process's recent activity must be on record before anything is judged idle.
      await seen.flush();
      const result = await createSession(db, {
        name,
        userId: randomUUID(),
        now,
        max: limits.max,
        idleBefore: new Date(now.getTime() - limits.idleMs),
        evictableBefore: new Date(now.getTime() - EVICTION_GRACE_MS),
        keep: DEFAULT_SANDBOX_SESSION,
      });
      await forget(result.evicted);
      if (result.outcome === 'full') {
        fullUntil = result.quietestSeenAt.getTime() + EVICTION_GRACE_MS;
        throw sessionLimitReached();
      }
      fullUntil = 0;
      users.set(name, result.userId);
      return result.userId;
    },

    async close(): Promise<void> {
      clearInterval(sweepTimer);
      await seen.close();
    },
  };
}

export type SandboxSessionsService = ReturnType<typeof createSandboxSessionsService>;
