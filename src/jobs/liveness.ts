// Which processes are alive, by heartbeat. Every process with a job queue (API processes with
// WORKERS=off too, so what they claim can be told apart from what a dead process left) has a
// random instance id and upserts its row of `instance_heartbeats` every few seconds, listing
// the pg-boss jobs it is running. A process whose last beat is older than the staleness bound
// is dead: the reaper (reaper.ts) hands its jobs to another worker, and other stores may treat
// what it claimed as abandoned (`isInstanceAliveSql`).
//
// Times are the database's `now()`, never a service's injected clock: liveness is
// infrastructure, measured in real time, on the one clock that instances on different
// machines share (their own clocks may disagree).
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Expression, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { type RepeatingTask, repeatEvery } from './repeating-task.js';

export interface LivenessTiming {
  /** How often a process beats. */
  beatSeconds: number;
  /** A process whose last beat is older than this is dead. */
  staleSeconds: number;
  /** How often a process running workers looks for jobs held by dead processes. */
  reapSeconds: number;
}

/**
 * A dead process's job is handed back at most STALE + REAP (25 s) after its last beat, then
 * waits pg-boss's retry delay (queues.ts): within a minute of the death. STALE is four beats,
 * so a live process is never taken for dead for one late beat (a busy pool, a GC pause).
 */
export const LIVENESS: LivenessTiming = { beatSeconds: 5, staleSeconds: 20, reapSeconds: 5 };

export const STALE_SECONDS = LIVENESS.staleSeconds;

export function newInstanceId(): string {
  return randomUUID();
}

/**
 * The SQL condition "instance X has beaten within the staleness bound", for stores that must
 * tell whether the process that claimed something is still alive: X is a value (bound as a
 * parameter) or a column, e.g. `isInstanceAliveSql(sql.ref('idempotency_keys.claimed_by'))`.
 * A missing row (a clean stop deletes it) reads as dead.
 */
export function isInstanceAliveSql(
  instanceId: string | Expression<string | null>,
  staleSeconds: number = STALE_SECONDS,
): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from instance_heartbeats
    where instance_id = ${instanceId}
      and beat_at > now() - make_interval(secs => ${staleSeconds}))`;
}

/**
 * The SQL condition "instance X beat once, and has not beaten within the staleness bound": it
 * died. For claims a process makes beside its jobs (an Idempotency-Key, a partner profile's
 * lease): unlike `isInstanceAliveSql`, an instance with no row at all is not taken for dead
 * (a clean stop deletes its row only once its work has ended; a claim left by a process that
 * never beat is freed by its own lease).
 */
export function hasStoppedBeatingSql(
  instanceId: Expression<string | null>,
  staleSeconds: number = STALE_SECONDS,
): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from instance_heartbeats
    where instance_id = ${instanceId}
      and beat_at <= now() - make_interval(secs => ${staleSeconds}))`;
}

/**
 * The jobs this process runs, as its beats list them. A job that ended is listed by one more
 * beat: pg-boss completes it in a statement of its own after the handler returns, and until
 * that commits the job is still `active`, so it must not look abandoned in between.
 */
export function createRunningJobs() {
  const running = new Map<string, number>();
  let ended = new Set<string>();
  const held = (): string[] => [...new Set([...running.keys(), ...ended])];
  return {
    started(id: string): void {
      running.set(id, (running.get(id) ?? 0) + 1);
    },
    ended(id: string): void {
      const count = (running.get(id) ?? 1) - 1;
      if (count > 0) {
        running.set(id, count);
      } else {
        running.delete(id);
      }
      ended.add(id);
    },
    /** What this process must never hand back itself. */
    held,
    /** What the next beat lists; jobs ended before it are not listed again after it. */
    takeForBeat(): string[] {
      const ids = held();
      ended = new Set();
      return ids;
    },
  };
}

export type RunningJobs = ReturnType<typeof createRunningJobs>;

export interface Heartbeat {
  /** No more beats; then the row is deleted (call once this process's jobs have ended). */
  stop(): Promise<void>;
}

/** Beats once (so the process is seen alive before it runs anything), then every period. */
export async function startHeartbeat(options: {
  db: Kysely<Database>;
  log: FastifyBaseLogger;
  instanceId: string;
  beatSeconds: number;
  jobs: RunningJobs;
}): Promise<Heartbeat> {
  const { db, log, instanceId } = options;
  let failing = false;

  // One statement, so the idle load is one transaction a beat.
  async function beat(): Promise<void> {
    await sql`
      insert into instance_heartbeats (instance_id, started_at, beat_at, running_jobs)
      values (${instanceId}, now(), now(), ${options.jobs.takeForBeat()}::uuid[])
      on conflict (instance_id) do update
        set beat_at = excluded.beat_at, running_jobs = excluded.running_jobs`.execute(db);
  }

  await beat();
  const task: RepeatingTask = repeatEvery(
    options.beatSeconds * 1000,
    async () => {
      try {
        await beat();
        if (failing) {
          failing = false;
          log.info({ instance_id: instanceId }, 'heartbeat written again');
        }
      } catch (error) {
        // Said once per outage: the database being down is reported by everything else too.
        if (!failing) {
          failing = true;
          log.warn(
            { err: error, instance_id: instanceId },
            'heartbeat not written; other processes will take this one for dead if it lasts',
          );
        }
      }
    },
    (error) => log.error({ err: error }, 'heartbeat failed'),
  );

  return {
    async stop() {
      await task.stop();
      // A database already closed (a test closing it first, a failed start) keeps the row:
      // others read it as dead once stale, as after a kill.
      await sql`delete from instance_heartbeats where instance_id = ${instanceId}`
        .execute(db)
        .catch((error) =>
          log.warn({ err: error, instance_id: instanceId }, 'heartbeat row not deleted'),
        );
    },
  };
}
