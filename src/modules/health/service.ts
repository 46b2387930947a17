// Whether this instance can serve: the database must answer. The answer is kept for a
// second so load balancers probing every few milliseconds do not each cost a round trip.
// Pinged on demand only (no timer): an idle instance nobody probes costs the database
// nothing, and the answer given is never older than a second, counted from when its ping
// was sent.
import type { Clock } from '../../clock.js';

export interface HealthDeps {
  ping(timeoutMs: number): Promise<void>;
  clock: Clock;
}

export type HealthStatus = 'ok' | 'unavailable';

const CACHE_MS = 1_000;
const PING_TIMEOUT_MS = 2_000;

export function createHealthService(deps: HealthDeps) {
  let last: { status: HealthStatus; at: number } | undefined;
  let probing: Promise<HealthStatus> | undefined;

  async function probe(): Promise<HealthStatus> {
    try {
      await deps.ping(PING_TIMEOUT_MS);
      return 'ok';
    } catch {
      return 'unavailable';
    }
  }

  /** The last ping's answer while it is under a second old (never pings). */
  function freshStatus(): HealthStatus | undefined {
    const now = deps.clock.now().getTime();
    return last && now - last.at < CACHE_MS && now >= last.at ? last.status : undefined;
  }

  /** The last answer while fresh, else a new ping's. */
  async function status(): Promise<HealthStatus> {
    const fresh = freshStatus();
    if (fresh !== undefined) {
      return fresh;
    }
    // One probe at a time; concurrent callers share its answer.
    const sentAt = deps.clock.now().getTime();
    probing ??= probe()
      .then((status) => {
        last = { status, at: sentAt };
        return status;
      })
      .finally(() => {
        probing = undefined;
      });
    return probing;
  }

  // One cache per dependency: the readiness probe keeps Redis's answer with this too.
  return { freshStatus, status, databaseStatus: status };
}

export type HealthService = ReturnType<typeof createHealthService>;
