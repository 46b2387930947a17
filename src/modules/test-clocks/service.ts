// Sandbox test clocks (CONTRACT.md §11.3), after Stripe's: a frozen time a caller owns,
// families attached to it live by it, and advancing it runs every time-based effect that
// fell due for those families (birthdays, coming of age) in order, as real time would have,
// with the same events and jobs. The run is a job (queue `age-changes`): it survives a
// crash, and the clock reads `advancing` until it has finished.
//
// The audit log (CONTRACT.md §12.1; docs/decisions.md "Test clocks in the audit log"): a
// clock is its owner's, not a family's. An org key's clock changes are on the org's chain; a
// person's or sandbox session's clock has no chain of its own and its changes write no
// entry. What a clock does to families is theirs: attaching one is the family's change, and
// deleting a clock moves each of its families back to the real clock, on each family's chain.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { callerKeyOf, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { afterCommit } from '../../db/request-transaction.js';
import type { Database } from '../../db/schema.js';
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import { actorOf } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import { markFamilyChildrenDue } from '../children/store.js';
import {
  deleteTestClock,
  familiesOnClock,
  findTestClock,
  insertTestClock,
  setFamilyClock,
  startAdvance,
  type TestClockRow,
} from './store.js';

export const TEST_CLOCK_NOT_FOUND = 'test clock not found';
/** A clock moves at most this far per advance (CONTRACT.md §11.3). */
const MAX_ADVANCE_YEARS = 2;

export interface AgeChangeJobData {
  test_clock_id: string;
}

function present(row: TestClockRow) {
  return {
    id: row.id,
    name: row.name,
    frozen_time: new Date(row.frozen_time).toISOString(),
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
  };
}

const day = (at: Date) => at.toISOString().slice(0, 10);

function parseTime(value: string, field: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) {
    throw new BadRequestError(`${field} must be an RFC 3339 date-time`);
  }
  return at;
}

export function createTestClocksService(deps: {
  db: Db;
  clock: Clock;
  jobs: Pick<JobQueue, 'send' | 'wake'>;
  writes: ChangeRunner;
  /** Off in production: every clock is then unknown (404). */
  enabled: boolean;
}) {
  const { db, clock } = deps;

  /** An org key's clock change, on the org's chain; a person's or session's writes none. */
  function auditClock(
    change: Change,
    principal: Principal,
    verb: 'created' | 'advanced' | 'deleted',
    clockId: string,
    changes: Record<string, unknown>,
  ) {
    if (principal.kind !== 'key') {
      return;
    }
    change.audit({
      orgId: principal.orgId,
      actor: actorOf(principal),
      action: `test_clock.${verb}`,
      target: { type: 'test_clock', id: clockId },
      changes,
    });
  }

  async function requireClock(principal: Principal, id: string, reader: Db = db) {
    const row = deps.enabled ? await findTestClock(reader, id, callerKeyOf(principal)) : undefined;
    if (!row) {
      throw new NotFoundError(TEST_CLOCK_NOT_FOUND);
    }
    return row;
  }

  /** Queues the run of what fell due for the clock's families (its commit wakes a worker). */
  async function queueRun(trx: Transaction<Database>, clockId: string) {
    const data: AgeChangeJobData = { test_clock_id: clockId };
    await deps.jobs.send(QUEUES.ageChanges, data, { trx });
    afterCommit(() => deps.jobs.wake(QUEUES.ageChanges));
  }

  return {
    enabled: deps.enabled,
    requireClock,

    async create(principal: Principal, input: { frozen_time: string; name?: string | null }) {
      if (!deps.enabled) {
        throw new NotFoundError(TEST_CLOCK_NOT_FOUND);
      }
      const row: TestClockRow = {
        id: randomUUID(),
        owner: callerKeyOf(principal),
        user_id: principal.kind === 'key' ? null : principal.userId,
        org_id: principal.kind === 'key' ? principal.orgId : null,
        name: input.name?.trim() || null,
        frozen_time: parseTime(input.frozen_time, 'frozen_time'),
        status: 'ready',
        created_at: clock.now(),
      };
      await deps.writes.run(async (change) => {
        await insertTestClock(change.trx, row);
        // A clock's name is free text: named, never quoted.
        auditClock(
          change,
          principal,
          'created',
          row.id,
          auditChanges({ frozen_time: present(row).frozen_time, name: input.name }, ['name']),
        );
      });
      return present(row);
    },

    get: async (principal: Principal, id: string) => present(await requireClock(principal, id)),

    async advance(principal: Principal, id: string, input: { frozen_time: string }) {
      const current = await requireClock(principal, id);
      const target = parseTime(input.frozen_time, 'frozen_time');
      if (target.getTime() <= new Date(current.frozen_time).getTime()) {
        throw new BadRequestError("frozen_time must be later than the clock's current frozen_time");
      }
      const limit = new Date(current.frozen_time);
      limit.setUTCFullYear(limit.getUTCFullYear() + MAX_ADVANCE_YEARS);
      if (target.getTime() > limit.getTime()) {
        throw new BadRequestError(
          `frozen_time may be at most ${MAX_ADVANCE_YEARS} years after the clock's current frozen_time`,
        );
      }
      return deps.writes.run(async (change) => {
        const moved = await startAdvance(change.trx, id, target);
        if (!moved) {
          throw new ConflictError(
            'the test clock is still advancing: wait until its status is ready',
          );
        }
        await queueRun(change.trx, id);
        const shown = present(moved);
        auditClock(change, principal, 'advanced', id, { frozen_time: shown.frozen_time });
        return shown;
      });
    },

    async remove(principal: Principal, id: string): Promise<void> {
      await requireClock(principal, id);
      const today = day(clock.now());
      await deps.writes.run(async (change) => {
        // Back on the real clock, their ages are those of today: the daily run applies them.
        for (const familyId of await familiesOnClock(change.trx, id)) {
          await markFamilyChildrenDue(change.trx, familyId, today);
          change.audit({
            familyId,
            actor: actorOf(principal),
            action: 'family.updated',
            target: { type: 'family', id: familyId },
            changes: { test_clock_id: null },
          });
        }
        await deleteTestClock(change.trx, id);
        auditClock(change, principal, 'deleted', id, {});
      });
    },

    /**
     * Attaches a family to a clock (null: the real clock) inside the caller's transaction; its
     * children's ages are those of the new clock from now on, applied by the clock's run (or
     * the daily run).
     */
    async attachFamily(
      principal: Principal,
      trx: Transaction<Database>,
      familyId: string,
      clockId: string | null,
    ): Promise<void> {
      const target = clockId === null ? undefined : await requireClock(principal, clockId, trx);
      await setFamilyClock(trx, familyId, clockId);
      await markFamilyChildrenDue(
        trx,
        familyId,
        day(target ? new Date(target.frozen_time) : clock.now()),
      );
      if (target) {
        await queueRun(trx, target.id);
      }
    },
  };
}

export type TestClocksService = ReturnType<typeof createTestClocksService>;
