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
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { ServiceUnavailableError } from '../../http/errors.js';
import { createSession, findSessionUser, sweepIdleSessions, writeLastSeen } from './store.js';

export const DEFAULT_SANDBOX_SESSION = 'default';
/** A session seen this recently is never evicted to make room for a new one. */
export const EVICTION_GRACE_MS = 10 * 60_000;
const FLUSH_EVERY_MS = 60_000;
const SWEEP_EVERY_MS = 10 * 60_000;
const EVICTED_CHANNEL = 'sandbox-sessions-evicted';

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
}) {
  const { db, clock, limits } = deps;
  const users = new LRUCache<string, string>({ max: Math.min(limits.max, 50_000) });
  let seen = new Map<string, Date>();

  deps.bus.subscribe(EVICTED_CHANNEL, (message) => {
    for (const name of JSON.parse(message) as string[]) {
      users.delete(name);
    }
  });

  async function forget(names: string[]): Promise<void> {
    if (names.length > 0) {
      deps.log.info({ sessions: names.length }, 'sandbox sessions deleted');
      await deps.bus.publish(EVICTED_CHANNEL, JSON.stringify(names));
    }
  }

  async function flush(): Promise<void> {
    const batch = seen;
    seen = new Map();
    try {
      await writeLastSeen(db, batch);
    } catch (error) {
      // Kept for the next flush; a lagging last-seen only delays an eviction.
      for (const [name, at] of batch) {
        if ((seen.get(name) ?? 0) < at) {
          seen.set(name, at);
        }
      }
      deps.log.warn({ err: error }, 'sandbox session last-seen flush failed');
    }
  }

  async function sweep(): Promise<void> {
    const idleBefore = new Date(clock.now().getTime() - limits.idleMs);
    await forget(await sweepIdleSessions(db, idleBefore, DEFAULT_SANDBOX_SESSION));
  }

  const flushTimer = setInterval(() => void flush(), FLUSH_EVERY_MS).unref();
  const sweepTimer = setInterval(
    () => void sweep().catch((error) => deps.log.warn({ err: error }, 'sandbox sweep failed')),
    SWEEP_EVERY_MS,
  ).unref();

  return {
    /** The user behind a session name, created on first use within the bounds above. */
    async resolve(name: string): Promise<string> {
      const now = clock.now();
      seen.set(name, now);
      const cached = users.get(name);
      if (cached) {
        return cached;
      }
      const known = await findSessionUser(db, name);
      if (known) {
        users.set(name, known);
        return known;
      }
      // This process's recent activity must be on record before anything is judged idle.
      await flush();
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
        seen.delete(name);
        throw new ServiceUnavailableError(
          'sandbox session limit reached: reuse an X-Sandbox-Session value or retry later',
        );
      }
      users.set(name, result.userId);
      return result.userId;
    },

    async close(): Promise<void> {
      clearInterval(flushTimer);
      clearInterval(sweepTimer);
      await flush();
    },
  };
}

export type SandboxSessionsService = ReturnType<typeof createSandboxSessionsService>;
