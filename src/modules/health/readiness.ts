// Whether this process should be sent work (GET /health/ready, CONTRACT.md §13): the
// database answers, Redis answers when one is configured, and the process is not on its way
// out. Each dependency's answer is kept for a second (service.ts): the database's is the very
// answer /health gives, so the two probes never disagree and never cost two round trips.
import type { Clock } from '../../clock.js';
import { createRedisPing } from './redis-ping.js';
import { createHealthService, type HealthService, type HealthStatus } from './service.js';

export type RedisCheck = HealthStatus | 'not_configured';

export interface ReadinessChecks {
  database: HealthStatus;
  redis: RedisCheck;
  /** True from the moment the process is told to stop (a shutdown delay included). */
  draining: boolean;
}

export interface Readiness {
  /** Every check, pinging what is not fresh. */
  check(): Promise<ReadinessChecks>;
  /** True when the last pings are fresh and said ok and the process is not stopping; never pings. */
  freshlyReady(): boolean;
  close(): Promise<void>;
}

export function isReady(checks: ReadinessChecks): boolean {
  return checks.database === 'ok' && checks.redis !== 'unavailable' && !checks.draining;
}

/** The 503's message: what is wrong, in words an operator reads in a probe's log. */
export function notReadyMessage(checks: ReadinessChecks): string {
  const reasons = [
    ...(checks.database === 'ok' ? [] : ['database unavailable']),
    ...(checks.redis === 'unavailable' ? ['redis unavailable'] : []),
    ...(checks.draining ? ['the instance is stopping'] : []),
  ];
  return `not ready: ${reasons.join(', ')}`;
}

export function createReadiness(deps: {
  /** The database's cached ping, shared with /health. */
  database: Pick<HealthService, 'databaseStatus' | 'freshStatus'>;
  redisUrl: string | undefined;
  clock: Clock;
  stopping(): boolean;
}): Readiness {
  const redisPing = deps.redisUrl ? createRedisPing(deps.redisUrl) : undefined;
  const redis = redisPing && createHealthService({ ping: redisPing.ping, clock: deps.clock });
  return {
    async check() {
      const [database, redisStatus] = await Promise.all([
        deps.database.databaseStatus(),
        redis ? redis.status() : ('not_configured' as const),
      ]);
      return { database, redis: redisStatus, draining: deps.stopping() };
    },
    freshlyReady() {
      return (
        deps.database.freshStatus() === 'ok' &&
        (redis === undefined || redis.freshStatus() === 'ok') &&
        !deps.stopping()
      );
    },
    async close() {
      await redisPing?.close();
    },
  };
}
