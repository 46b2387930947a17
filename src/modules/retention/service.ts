// The retention purge (CONTRACT.md §12.4): what is older than its retention on its owner's
// clock goes, one owner per transaction, with one `retention.purged` entry on the owner's
// audit chain naming how many rows of each table went (none when nothing did).
// - Cutoffs are whole UTC days: a record goes at the first purge of the day after it is
//   `days` old on the owner's clock, so every purge of one day removes the same set and a
//   second one finds nothing (docs/decisions.md "Retention: whole days on the owner's clock").
// - A record is judged by the clock that dated it: a family's viewing history, device reports
//   and audit chain by the family's clock (its test clock's frozen time when it has one);
//   webhook deliveries (real HTTP attempts, stamped by the real clock), usage and org chains by
//   the real clock; an erasure receipt by the clock that dated it (the erased family's test
//   clock, while that clock exists). A receipt is removed once its erasure completed, on its
//   org's chain (a person's erasure has none: no entry).
// - Audit chains lose whole oldest prefixes: up to, not including, the first entry that is not
//   older, so the chain verifies from its first kept entry.
import type { Clock } from '../../clock.js';
import type { RetentionDays } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import { systemActor } from '../audit/actor.js';
import { allowAuditRemoval } from '../audit/store.js';
import { familiesOnClock, findClockById } from '../test-clocks/store.js';
import {
  deleteChainPrefix,
  deleteFamilyRecords,
  deleteOrgUsage,
  deleteReceipts,
  type FamilyTable,
  type FoundRecord,
  firstKeptEntry,
  type Keyset,
  lockFamily,
  lockOrg,
  oldestEntry,
  receiptOwnersOnClock,
  walkAuditEntries,
  walkFamilyRecords,
  walkReceipts,
  walkUsage,
} from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows one delete statement removes: short statements, whatever a family's backlog. */
const ROWS_PER_STATEMENT = 1_000;

/**
 * Rows one transaction removes at most: a family (or org) with more, after a long outage or a
 * shortened retention, is purged in several transactions, each with its own entry.
 */
const ROWS_PER_TRANSACTION = 10_000;

/** Records a walk of the real clock's run reads at a time. */
const WALK_PAGE = 200;

/**
 * Which retention each of a family's tables keeps, and which clock dates its rows: the
 * family's (times the device gives) or the real one (Haven's own delivery attempts).
 */
const FAMILY_TABLES: ReadonlyArray<[FamilyTable, keyof RetentionDays, 'family' | 'real']> = [
  ['viewing_history', 'viewing_history_days', 'family'],
  ['device_reports', 'device_reports_days', 'family'],
  ['webhook_deliveries', 'webhook_deliveries_days', 'real'],
];

/** What one owner's purge removed: rows by table, only the tables that lost some. */
export type Removed = Record<string, number>;

interface Pass {
  removed: Removed;
  /** The row budget ran out: more may be due. */
  more: boolean;
}

/** The oldest time a record may have and be kept, for each retention, on a day. */
export function cutoffsOn(days: RetentionDays, now: Date): Record<keyof RetentionDays, Date> {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const cut = (keep: number) => new Date(midnight - keep * DAY_MS);
  return {
    viewing_history_days: cut(days.viewing_history_days),
    device_reports_days: cut(days.device_reports_days),
    webhook_deliveries_days: cut(days.webhook_deliveries_days),
    usage_days: cut(days.usage_days),
    audit_log_days: cut(days.audit_log_days),
    erasure_receipts_days: cut(days.erasure_receipts_days),
  };
}

/** A real-clock run's totals, for its log line. */
export interface RunTotals {
  day: string;
  families: number;
  orgs: number;
  rows: number;
}

export function createRetentionService(deps: {
  db: Db;
  clock: Clock;
  writes: Pick<ChangeRunner, 'run'>;
  days: RetentionDays;
}) {
  const { db, days } = deps;

  /** Deletes with `statement` until it removes fewer than a statement's worth or `budget` is spent. */
  async function drain(
    budget: { left: number },
    statement: (limit: number) => Promise<number>,
  ): Promise<number> {
    let removed = 0;
    while (budget.left > 0) {
      const limit = Math.min(ROWS_PER_STATEMENT, budget.left);
      const count = await statement(limit);
      removed += count;
      budget.left -= count;
      if (count < limit) {
        break;
      }
    }
    return removed;
  }

  /** Removes the chain's oldest entries older than `cutoff`, within the budget. */
  async function drainChain(
    change: Change,
    chainId: string,
    cutoff: Date,
    budget: { left: number },
  ): Promise<number> {
    const oldest = await oldestEntry(change.trx, chainId).executeTakeFirst();
    if (!oldest || new Date(oldest.occurred_at).getTime() >= cutoff.getTime()) {
      return 0; // the common case: one statement, no write
    }
    const kept = await firstKeptEntry(change.trx, chainId, cutoff).executeTakeFirst();
    const keptSeq = kept ? Number(kept.seq) : undefined;
    let allowed = false;
    return drain(budget, async (limit) => {
      if (!allowed) {
        await allowAuditRemoval(change.trx);
        allowed = true;
      }
      const result = await deleteChainPrefix(
        change.trx,
        chainId,
        keptSeq,
        limit,
      ).executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }

  function record(removed: Removed, table: string, count: number): void {
    if (count > 0) {
      removed[table] = count;
    }
  }

  /**
   * One transaction of a family's purge by the clock running it (`runClock`: a test clock's
   * id, null for the real clock's run). What the family's clock dates is purged only by its
   * own clock's run (a family no longer on `runClock` is that clock's); what the real clock
   * dates, by any run.
   */
  function familyPass(familyId: string, runClock: string | null): Promise<Pass> {
    return deps.writes.run(async (change) => {
      const removed: Removed = {};
      const family = await lockFamily(change.trx, familyId);
      if (!family) {
        return { removed, more: false };
      }
      const own = family.test_clock_id === runClock;
      const real = cutoffsOn(days, deps.clock.now());
      const cutoffs = family.clock_time ? cutoffsOn(days, new Date(family.clock_time)) : real;
      const budget = { left: ROWS_PER_TRANSACTION };
      for (const [table, retention, datedBy] of FAMILY_TABLES) {
        if (datedBy === 'family' && !own) {
          continue;
        }
        const cutoff = (datedBy === 'family' ? cutoffs : real)[retention];
        const count = await drain(budget, async (limit) => {
          const result = await deleteFamilyRecords(
            change.trx,
            table,
            familyId,
            cutoff,
            limit,
          ).executeTakeFirst();
          return Number(result.numDeletedRows);
        });
        record(removed, table, count);
      }
      if (own) {
        const entries = await drainChain(change, familyId, cutoffs.audit_log_days, budget);
        record(removed, 'audit_entries', entries);
      }
      if (Object.keys(removed).length > 0) {
        change.audit({
          familyId,
          actor: systemActor('retention purge'),
          action: 'retention.purged',
          target: { type: 'family', id: familyId },
          changes: removed,
        });
      }
      return { removed, more: budget.left === 0 };
    });
  }

  /** One transaction of an org's purge (usage and the org's chain), by the real clock. */
  function orgPass(orgId: string): Promise<Pass> {
    const cutoffs = cutoffsOn(days, deps.clock.now());
    return deps.writes.run(async (change) => {
      const removed: Removed = {};
      if (!(await lockOrg(change.trx, orgId))) {
        // Gone, with its usage (cascade): receipts naming it may remain, on no chain.
        return receiptsWithin(change, null, orgId, null, cutoffs.erasure_receipts_days);
      }
      const budget = { left: ROWS_PER_TRANSACTION };
      const usage = await drain(budget, async (limit) => {
        const result = await deleteOrgUsage(
          change.trx,
          orgId,
          cutoffs.usage_days,
          limit,
        ).executeTakeFirst();
        return Number(result.numDeletedRows);
      });
      record(removed, 'developer_usage', usage);
      const receipts = await drain(budget, async (limit) => {
        const result = await deleteReceipts(
          change.trx,
          orgId,
          null,
          cutoffs.erasure_receipts_days,
          limit,
        ).executeTakeFirst();
        return Number(result.numDeletedRows);
      });
      record(removed, 'erasure_receipts', receipts);
      const entries = await drainChain(change, orgId, cutoffs.audit_log_days, budget);
      record(removed, 'audit_entries', entries);
      if (Object.keys(removed).length > 0) {
        change.audit({
          orgId,
          actor: systemActor('retention purge'),
          action: 'retention.purged',
          target: { type: 'org', id: orgId },
          changes: removed,
        });
      }
      return { removed, more: budget.left === 0 };
    });
  }

  /**
   * Removes receipts of an org (or of none) dated by a test clock (`clockId`) or the real
   * clock (null), older than `cutoff`, in the change's transaction; the entry goes on
   * `chainOrgId`'s chain (null: none to write on).
   */
  async function receiptsWithin(
    change: Change,
    chainOrgId: string | null,
    orgId: string | null,
    clockId: string | null,
    cutoff: Date,
  ): Promise<Pass> {
    const removed: Removed = {};
    const budget = { left: ROWS_PER_TRANSACTION };
    const receipts = await drain(budget, async (limit) => {
      const result = await deleteReceipts(
        change.trx,
        orgId,
        clockId,
        cutoff,
        limit,
      ).executeTakeFirst();
      return Number(result.numDeletedRows);
    });
    record(removed, 'erasure_receipts', receipts);
    if (chainOrgId !== null && receipts > 0) {
      change.audit({
        orgId: chainOrgId,
        actor: systemActor('retention purge'),
        action: 'retention.purged',
        target: { type: 'org', id: chainOrgId },
        changes: removed,
      });
    }
    return { removed, more: budget.left === 0 };
  }

  /** One transaction of `receiptsWithin`, the org (if any) locked as its purge locks it. */
  function receiptsPass(orgId: string | null, clockId: string | null, cutoff: Date): Promise<Pass> {
    return deps.writes.run(async (change) => {
      const onChain = orgId !== null && (await lockOrg(change.trx, orgId));
      return receiptsWithin(change, onChain ? orgId : null, orgId, clockId, cutoff);
    });
  }

  /** Runs passes until one leaves nothing due; the rows removed in all. */
  async function untilDone(pass: () => Promise<Pass>): Promise<number> {
    let rows = 0;
    for (;;) {
      const { removed, more } = await pass();
      rows += Object.values(removed).reduce((sum, count) => sum + count, 0);
      if (!more) {
        return rows;
      }
    }
  }

  /**
   * Walks `page` from the oldest record, handing each owner found to `purge` once per page.
   * A record its owner's purge could not remove is passed over (the keyset moves on).
   */
  async function walk(
    page: (after: Keyset | undefined) => Promise<FoundRecord[]>,
    purge: (record: FoundRecord) => Promise<void>,
    stopping: () => boolean,
  ): Promise<void> {
    let after: Keyset | undefined;
    while (!stopping()) {
      const found = await page(after);
      const owners = new Map<string, FoundRecord>();
      for (const record of found) {
        owners.set(record.family_id ?? record.org_id ?? '', record);
      }
      for (const owner of owners.values()) {
        if (stopping()) {
          return;
        }
        await purge(owner);
        // On PGlite a statement completes without passing through the event loop: requests
        // get their turn between owners.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const last = found.at(-1);
      if (!last || found.length < WALK_PAGE) {
        return;
      }
      after = { at: last.at, id: last.id };
    }
  }

  return {
    /** The policy GET /api/v1/retention answers. */
    days,

    /** Purges one family on the real clock (clockId null) or on its test clock. */
    purgeFamily: (familyId: string, clockId: string | null) =>
      untilDone(() => familyPass(familyId, clockId)),

    purgeOrg: (orgId: string) => untilDone(() => orgPass(orgId)),

    /**
     * Purges every family on a test clock, and the erasure receipts it dates, by the clock's
     * time (its advance's run).
     */
    async purgeTestClock(clockId: string): Promise<number> {
      let rows = 0;
      for (const familyId of await familiesOnClock(db, clockId)) {
        rows += await untilDone(() => familyPass(familyId, clockId));
      }
      const clock = await findClockById(db, clockId);
      if (clock) {
        const cutoff = cutoffsOn(days, new Date(clock.frozen_time)).erasure_receipts_days;
        for (const orgId of await receiptOwnersOnClock(db, clockId, cutoff)) {
          rows += await untilDone(() => receiptsPass(orgId, clockId, cutoff));
        }
      }
      return rows;
    },

    /**
     * The real clock's daily purge: every family on the real clock and every org holding a
     * record older than its retention today is purged once.
     */
    async runRealClock(stopping: () => boolean = () => false): Promise<RunTotals> {
      const now = deps.clock.now();
      const cutoffs = cutoffsOn(days, now);
      const families = new Set<string>();
      const orgs = new Set<string>();
      let rows = 0;
      const purgeFamily = async (familyId: string) => {
        const removed = await untilDone(() => familyPass(familyId, null));
        if (removed > 0) {
          families.add(familyId);
          rows += removed;
        }
      };
      const purgeOrg = async (orgId: string) => {
        const removed = await untilDone(() => orgPass(orgId));
        if (removed > 0) {
          orgs.add(orgId);
          rows += removed;
        }
      };
      for (const [table, retention] of FAMILY_TABLES) {
        // Records the family's clock dates are walked for families on the real clock only.
        await walk(
          (after) => walkFamilyRecords(db, table, cutoffs[retention], after, WALK_PAGE).execute(),
          (found) => purgeFamily(found.family_id as string),
          stopping,
        );
      }
      await walk(
        (after) => walkAuditEntries(db, cutoffs.audit_log_days, after, WALK_PAGE).execute(),
        (found) =>
          found.family_id ? purgeFamily(found.family_id) : purgeOrg(found.org_id as string),
        stopping,
      );
      await walk(
        (after) => walkUsage(db, cutoffs.usage_days, after, WALK_PAGE).execute(),
        (found) => purgeOrg(found.org_id as string),
        stopping,
      );
      await walk(
        (after) => walkReceipts(db, cutoffs.erasure_receipts_days, after, WALK_PAGE).execute(),
        async (found) => {
          if (found.org_id) {
            await purgeOrg(found.org_id);
          } else {
            rows += await untilDone(() => receiptsPass(null, null, cutoffs.erasure_receipts_days));
          }
        },
        stopping,
      );
      return {
        day: now.toISOString().slice(0, 10),
        families: families.size,
        orgs: orgs.size,
        rows,
      };
    },
  };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
