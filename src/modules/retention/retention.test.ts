// CONTRACT.md §12.4: the retention policy (open, from the environment), and the daily purge
// on the family's clock: a family on a test clock is purged when its clock advances, families
// on the real clock and orgs by the real clock's daily run. Exactly the old rows go, the
// recent ones and pending deliveries stay, one `retention.purged` entry per purge with exact
// counts, the audit chain verifies from its first kept entry, and a second purge the same day
// removes and writes nothing.
import { randomUUID } from 'node:crypto';
import { type Compilable, CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, testConfig } from '../../../test/app.js';
import { type ChainEntry, chainHolds } from '../../../test/audit-chain.js';
import { TestClock } from '../../../test/clock.js';
import { createOrg, longSession, mintKey, type Session } from '../../../test/identity.js';
import { ConfigError } from '../../config.js';
import type { Db } from '../../db/connect.js';
import {
  deleteChainPrefix,
  deleteFamilyRecords,
  deleteOrgUsage,
  deleteReceipts,
  type FamilyTable,
  firstKeptEntry,
  oldestEntry,
  walkAuditEntries,
  walkFamilyRecords,
  walkReceipts,
  walkUsage,
} from './store.js';

const DEFAULTS = {
  viewing_history_days: 90,
  device_reports_days: 30,
  webhook_deliveries_days: 30,
  usage_days: 400,
  audit_log_days: 400,
  erasure_receipts_days: 400,
};

async function until(done: () => Promise<boolean> | boolean, message: string) {
  const deadline = Date.now() + 20_000;
  while (!(await done())) {
    expect(Date.now(), message).toBeLessThan(deadline);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Calls of one caller, answered 2xx. */
function caller(t: TestApp, session: Session) {
  return async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: session.auth,
      ...(payload === undefined ? {} : { payload }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
}

/** Every entry of a chain's audit log (family or org route), oldest first. */
async function chain(call: ReturnType<typeof caller>, path: string): Promise<ChainEntry[]> {
  const entries: ChainEntry[] = [];
  let before: string | null = null;
  do {
    const page: { entries: ChainEntry[]; next_before: string | null } = await call(
      'GET',
      `${path}?limit=200${before ? `&before=${before}` : ''}`,
    );
    entries.push(...page.entries);
    before = page.next_before;
  } while (before);
  return entries.reverse();
}

/** Rows written as a device, a deployment or time would have left them. */
function rows(db: Db) {
  return {
    async viewing(childId: string, watchedAt: string) {
      const id = randomUUID();
      await db
        .insertInto('viewing_history')
        .values({
          id,
          child_id: childId,
          device_id: null,
          platform: 'netflix',
          title: 'Old Show',
          series_title: null,
          watched_at: new Date(watchedAt),
          created_at: new Date(watchedAt),
        })
        .execute();
      return id;
    },
    async report(childId: string, deviceId: string, reportedAt: string) {
      const id = randomUUID();
      await db
        .insertInto('device_reports')
        .values({
          id,
          device_id: deviceId,
          child_id: childId,
          report_type: 'screen_time',
          payload: JSON.stringify({ minutes: 30 }),
          reported_at: new Date(reportedAt),
          received_at: new Date(reportedAt),
        })
        .execute();
      return id;
    },
    async delivery(webhookId: string, status: 'pending' | 'succeeded' | 'failed', at: string) {
      const id = randomUUID();
      await db
        .insertInto('webhook_deliveries')
        .values({
          id,
          webhook_id: webhookId,
          message_id: `msg_${id}`,
          event: 'child.updated',
          payload: '{}',
          status,
          response_code: status === 'succeeded' ? 204 : null,
          error: status === 'failed' ? 'endpoint answered HTTP 500' : null,
          attempt: 1,
          next_retry_at: null,
          created_at: new Date(at),
          attempted_at: status === 'pending' ? null : new Date(at),
        })
        .execute();
      return id;
    },
    /** A receipt of a family's erasure, completed unless `completed` is false. */
    async receipt(
      requestedAt: string,
      owner: { orgId?: string; clockId?: string; completed?: boolean } = {},
    ) {
      const id = randomUUID();
      const completed = owner.completed ?? true;
      await db
        .insertInto('erasure_receipts')
        .values({
          id,
          subject_type: 'family',
          subject_id: randomUUID(),
          requested_by_user_id: null,
          org_id: owner.orgId ?? null,
          environment: owner.orgId ? 'test' : null,
          test_clock_id: owner.clockId ?? null,
          requested_at: new Date(requestedAt),
          completed_at: completed ? new Date(requestedAt) : null,
          erased: JSON.stringify({ families: 1 }),
          releases: JSON.stringify([]),
          signature: completed ? 'eyJhbGciOiJFZERTQSJ9.e30.c2ln' : null,
        })
        .execute();
      return id;
    },
    async usage(orgId: string, keyId: string, hour: string) {
      const id = randomUUID();
      await db
        .insertInto('developer_usage')
        .values({
          id,
          key_id: keyId,
          org_id: orgId,
          hour: new Date(hour),
          endpoint: 'GET /api/v1/families',
          status_2xx: 3,
          status_4xx: 0,
          status_5xx: 0,
          total_requests: 3,
        })
        .execute();
      return id;
    },
  };
}

/** The receipts among `ids` still kept (sorted). */
async function receiptsLeft(db: Db, ids: string[]) {
  const found = await db
    .selectFrom('erasure_receipts')
    .select('id')
    .where('id', 'in', ids)
    .execute();
  return found.map((row) => row.id).sort();
}

/** What is left of a family's records (ids, sorted). */
async function remaining(db: Db, childId: string, webhookId: string) {
  const ids = (found: Array<{ id: string }>) => found.map((row) => row.id).sort();
  return {
    viewing: ids(
      await db.selectFrom('viewing_history').select('id').where('child_id', '=', childId).execute(),
    ),
    reports: ids(
      await db.selectFrom('device_reports').select('id').where('child_id', '=', childId).execute(),
    ),
    deliveries: ids(
      await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', '=', webhookId)
        .execute(),
    ),
  };
}

describe('the retention policy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('is open, from the configuration, and cacheable', async () => {
    const res = await t.app.inject({ url: '/api/v1/retention' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual(DEFAULTS);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
  });

  it('is in the API document, tagged Retention, without security', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json();
    const operation = document.paths['/api/v1/retention'].get;
    expect(operation).toMatchObject({ operationId: 'getRetentionPolicy', tags: ['Retention'] });
    expect(operation.security).toBeUndefined();
    const schema = operation.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(DEFAULTS).sort());
  });

  it('takes each number from RETENTION_<NAME>_DAYS', async () => {
    const other = await buildTestApp({
      env: { RETENTION_VIEWING_HISTORY_DAYS: '7', RETENTION_ERASURE_RECEIPTS_DAYS: '30' },
    });
    try {
      const res = await other.app.inject({ url: '/api/v1/retention' });
      expect(res.json()).toEqual({
        ...DEFAULTS,
        viewing_history_days: 7,
        erasure_receipts_days: 30,
      });
    } finally {
      await other.close();
    }
  });

  it('refuses to start on a value that is not a positive integer of days', async () => {
    for (const [variable, value] of [
      ['RETENTION_VIEWING_HISTORY_DAYS', '0'],
      ['RETENTION_DEVICE_REPORTS_DAYS', '-3'],
      ['RETENTION_WEBHOOK_DELIVERIES_DAYS', '1.5'],
      ['RETENTION_USAGE_DAYS', 'forever'],
      ['RETENTION_AUDIT_LOG_DAYS', '36501'],
      ['RETENTION_ERASURE_RECEIPTS_DAYS', '1e3'],
    ] as const) {
      const message = `${variable}: must be a positive integer number of days up to 36500, got "${value}"`;
      expect(() => testConfig({ [variable]: value })).toThrow(ConfigError);
      expect(() => testConfig({ [variable]: value })).toThrow(message);
      await expect(buildTestApp({ env: { [variable]: value } })).rejects.toThrow(message);
    }
  });

  it('reads every purge through an index', async () => {
    const cutoff = new Date('2026-01-01T00:00:00Z');
    const after = { at: '2025-06-01 00:00:00+00', id: randomUUID() };
    const id = randomUUID();
    const plans: Array<[string, string | RegExp, Compilable]> = [];
    const tables: Array<[FamilyTable, string, string]> = [
      ['viewing_history', 'viewing_history_watched', 'viewing_history_child'],
      ['device_reports', 'device_reports_reported', 'device_reports_child_reported'],
      ['webhook_deliveries', 'webhook_deliveries_finished', 'webhook_deliveries_webhook'],
    ];
    const db = t.database.handle.db;
    await db.transaction().execute(async (trx) => {
      // Tiny tables: the planner would scan them whatever the indexes. Without sequential
      // scans it still can when no index serves the statement, so the plan shows which.
      // Sorting and bitmap scans are off too: a walk must come in its index's order.
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
      await sql`set local enable_sort = off`.execute(trx);
      for (const [table, walkIndex, ownerIndex] of tables) {
        plans.push([`walk ${table}`, walkIndex, walkFamilyRecords(trx, table, cutoff, after, 200)]);
        plans.push([
          `purge ${table}`,
          ownerIndex,
          deleteFamilyRecords(trx, table, id, cutoff, 1000),
        ]);
      }
      plans.push([
        'walk audit',
        'audit_entries_occurred',
        walkAuditEntries(trx, cutoff, after, 200),
      ]);
      plans.push(['walk usage', 'developer_usage_hour', walkUsage(trx, cutoff, after, 200)]);
      plans.push([
        'purge usage',
        'developer_usage_org_hour',
        deleteOrgUsage(trx, id, cutoff, 1000),
      ]);
      plans.push(['first kept', 'audit_entries_chain_id_seq_key', firstKeptEntry(trx, id, cutoff)]);
      plans.push(['oldest entry', 'audit_entries_chain_id_seq_key', oldestEntry(trx, id)]);
      plans.push([
        'purge chain',
        'audit_entries_chain_id_seq_key',
        deleteChainPrefix(trx, id, 12, 1000),
      ]);
      plans.push([
        'walk receipts',
        'erasure_receipts_completed',
        walkReceipts(trx, cutoff, after, 200),
      ]);
      plans.push([
        "purge an org's receipts",
        'erasure_receipts_org_completed',
        deleteReceipts(trx, id, null, cutoff, 1000),
      ]);
      plans.push([
        'purge receipts of no org',
        /erasure_receipts_(org_)?completed/,
        deleteReceipts(trx, null, null, cutoff, 1000),
      ]);
      plans.push([
        "purge a test clock's receipts",
        'erasure_receipts_test_clock',
        deleteReceipts(trx, null, id, cutoff, 1000),
      ]);
      for (const [name, index, query] of plans) {
        // Kysely's own explain() answers a DELETE with its row count, not its plan.
        const compiled = query.compile();
        const explained = await trx.executeQuery<Record<string, string>>(
          CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
        );
        const plan = explained.rows.map((row) => Object.values(row).join(' ')).join('\n');
        expect(plan, name).toMatch(index);
        expect(plan, name).not.toMatch(
          /Seq Scan on (viewing_history|device_reports|webhook_deliveries|developer_usage|audit_entries|erasure_receipts)\b/,
        );
        if (name.startsWith('walk')) {
          expect(plan, `${name} walks in index order`).not.toMatch(/\bSort\b/);
        }
      }
    });
  });
});

describe('a family on a test clock', () => {
  let t: TestApp;
  let owner: Session;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    // 20 days of audit log, so one test-clock year is not needed to see entries go. The real
    // clock (15 January 2026) stands still and its daily run does not look here: what goes,
    // goes at the clock's advance.
    t = await buildTestApp({
      env: { RETENTION_AUDIT_LOG_DAYS: '20' },
      tuning: { retentionRunPeriodMs: 3_600_000 },
    });
    owner = await longSession(t);
    call = caller(t, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  async function advance(clockId: string, frozenTime: string) {
    await call('POST', `/sandbox/test-clocks/${clockId}/advance`, { frozen_time: frozenTime });
    await until(async () => {
      const row = await t.database.handle.db
        .selectFrom('test_clocks')
        .select('status')
        .where('id', '=', clockId)
        .executeTakeFirstOrThrow();
      return row.status === 'ready';
    }, 'the clock never became ready');
  }

  it("is purged by its clock's time when the clock advances, once a day", async () => {
    const db = t.database.handle.db;
    const insert = rows(db);
    const clock = await call('POST', '/sandbox/test-clocks', {
      frozen_time: '2026-01-10T09:00:00Z',
    });
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Ada',
      birth_date: '2016-05-01',
      test_clock_id: clock.id,
    });
    const familyId: string = setup.family.id;
    const childId: string = setup.child.id;
    // An event that does not happen here: the deliveries are the ones written below.
    const webhook = await call('POST', '/webhooks', {
      family_id: familyId,
      url: 'https://hooks.example.com/haven',
      events: ['child.came_of_age'],
    });
    const device = await call('POST', `/children/${childId}/devices`, {
      device_name: 'Tablet',
    });
    const familyLog = `/families/${familyId}/audit-log`;
    const made = await chain(call, familyLog);
    expect(made.every((entry) => entry.occurred_at === '2026-01-10T09:00:00.000Z')).toBe(true);

    // 15 days on: within every retention (the log's 20 days too), nothing goes.
    await advance(clock.id, '2026-01-25T09:00:00Z');
    expect((await chain(call, familyLog)).map((entry) => entry.id)).toEqual(
      made.map((entry) => entry.id),
    );
    // Entries of that day, a report through the device's own route, and older records.
    await call('PATCH', `/children/${childId}`, { name: 'Ada B' });
    const reported = await t.app.inject({
      method: 'POST',
      url: '/api/v1/device/report',
      headers: { 'x-device-key': device.device_key },
      payload: {
        report_type: 'viewing',
        payload: { platform: 'netflix', title: 'Bluey', watched_at: '2026-01-24T20:00:00Z' },
        reported_at: '2026-01-25T08:00:00Z',
      },
    });
    expect(reported.statusCode, reported.body).toBe(202);
    const kept = await remaining(db, childId, webhook.id);
    const oldViewing = await insert.viewing(childId, '2025-11-01T20:00:00Z');
    kept.viewing.push(await insert.viewing(childId, '2025-12-01T20:00:00Z'));
    const oldReport = await insert.report(childId, device.device.id, '2026-01-05T10:00:00Z');
    kept.reports.push(await insert.report(childId, device.device.id, '2026-01-20T10:00:00Z'));
    // Deliveries are Haven's own attempts, dated by the real clock (15 January 2026): those
    // before 16 December 2025 go, whatever the family's clock says.
    const oldSucceeded = await insert.delivery(webhook.id, 'succeeded', '2025-12-01T10:00:00Z');
    const oldFailed = await insert.delivery(webhook.id, 'failed', '2025-12-01T10:00:00Z');
    // Still being delivered: kept whatever its age.
    kept.deliveries.push(await insert.delivery(webhook.id, 'pending', '2025-12-01T10:00:00Z'));
    // Old on the family's clock only.
    kept.deliveries.push(await insert.delivery(webhook.id, 'succeeded', '2026-01-05T10:00:00Z'));
    // Receipts of erasures the clock dated (families erased while on it).
    const org = await createOrg(t.app, owner, 'Clocked Inc');
    const orgLog = `/developers/orgs/${org.id}/audit-log`;
    const receipts = {
      org: await insert.receipt('2025-01-01T10:00:00Z', { orgId: org.id, clockId: clock.id }),
      person: await insert.receipt('2025-01-01T10:00:00Z', { clockId: clock.id }),
      underWay: await insert.receipt('2025-01-01T10:00:00Z', {
        clockId: clock.id,
        completed: false,
      }),
      recent: await insert.receipt('2025-06-01T10:00:00Z', { orgId: org.id, clockId: clock.id }),
      // Dated by the real clock (15 January 2026): within its 400 days.
      real: await insert.receipt('2025-01-01T10:00:00Z', { orgId: org.id }),
    };
    const orgBefore = await chain(call, orgLog);
    const before = await chain(call, familyLog);
    // On 10 February: viewing before 12 November, reports before 11 January, entries before
    // 21 January, receipts before 6 January 2025 are out.
    const cut = '2026-01-21T00:00:00.000Z';
    const old = before.filter((entry) => entry.occurred_at < cut);
    expect(old.map((entry) => entry.id)).toEqual(made.map((entry) => entry.id));
    const firstKept = before[old.length];
    expect(firstKept?.occurred_at).toBe('2026-01-25T09:00:00.000Z');

    await advance(clock.id, '2026-02-10T09:00:00Z');
    const left = await remaining(db, childId, webhook.id);
    expect(left).toEqual({
      viewing: kept.viewing.sort(),
      reports: kept.reports.sort(),
      deliveries: kept.deliveries.sort(),
    });
    for (const gone of [oldViewing, oldReport, oldSucceeded, oldFailed]) {
      expect([...left.viewing, ...left.reports, ...left.deliveries]).not.toContain(gone);
    }

    const after = await chain(call, familyLog);
    // The chain starts at its first kept entry and verifies from it.
    expect(after[0]?.id).toBe(firstKept?.id);
    expect(after[0]?.seq).toBe(old.length + 1);
    expect(chainHolds(after)).toBe(true);
    expect(after.slice(0, -1).map((entry) => entry.id)).toEqual(
      before.slice(old.length).map((entry) => entry.id),
    );
    const purged = after.filter((entry) => entry.action === 'retention.purged');
    expect(purged).toHaveLength(1);
    expect(purged[0]).toMatchObject({
      seq: before.length + 1,
      occurred_at: '2026-02-10T09:00:00.000Z',
      actor: { type: 'system', id: 'haven', label: 'retention purge' },
      target: { type: 'family', id: familyId },
      request_id: null,
      changes: {
        viewing_history: 1,
        device_reports: 1,
        webhook_deliveries: 2,
        audit_entries: old.length,
      },
    });
    expect(Object.keys(purged[0]?.changes ?? {})).toHaveLength(4);

    // The org's receipt went with an entry on the org's chain; the person's with none (no
    // chain is theirs); an erasure under way keeps its receipt.
    const all = Object.values(receipts);
    expect(await receiptsLeft(db, all)).toEqual(
      [receipts.underWay, receipts.recent, receipts.real].sort(),
    );
    const orgAfter = await chain(call, orgLog);
    expect(orgAfter.slice(0, -1)).toEqual(orgBefore);
    expect(orgAfter.at(-1)).toMatchObject({
      action: 'retention.purged',
      actor: { type: 'system', id: 'haven', label: 'retention purge' },
      target: { type: 'org', id: org.id },
      changes: { erasure_receipts: 1 },
    });
    expect(Object.keys(orgAfter.at(-1)?.changes ?? {})).toHaveLength(1);
    expect(chainHolds(orgAfter)).toBe(true);

    // The same day again: nothing more is old, nothing is removed or written.
    await advance(clock.id, '2026-02-10T21:00:00Z');
    expect(await remaining(db, childId, webhook.id)).toEqual(left);
    expect((await chain(call, familyLog)).map((entry) => entry.id)).toEqual(
      after.map((entry) => entry.id),
    );
    expect(await chain(call, orgLog)).toEqual(orgAfter);
    expect(await receiptsLeft(db, all)).toEqual(
      [receipts.underWay, receipts.recent, receipts.real].sort(),
    );
  });
});

describe("the real clock's daily purge", () => {
  const START = '2026-05-03T12:00:00Z';
  /**
   * 403 days on: reports and deliveries before 11 May 2027, viewing before 12 March 2027,
   * entries, usage and receipts before 6 May 2026 are out.
   */
  const LATER = '2027-06-10T08:00:00Z';
  let t: TestApp;
  let owner: Session;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await buildTestApp({
      clock: new TestClock(START),
      // The purge looks every 10 ms; the birthday the clock jump passes is not this test's.
      tuning: { retentionRunPeriodMs: 10, ageRunPeriodMs: 3_600_000 },
    });
    owner = await longSession(t, 1_000 * 86_400);
    call = caller(t, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  const finished = (app: TestApp, day: string) =>
    app.logs.find((line) => line.msg === 'retention purge finished' && line.day === day);

  it('purges each family and org on the real clock once a day, and a second run finds nothing', async () => {
    const db = t.database.handle.db;
    const insert = rows(db);
    await until(() => finished(t, '2026-05-03') !== undefined, "the first day's purge never ran");

    const setup = await call('POST', '/setup/quick', {
      child_name: 'Ren',
      birth_date: '2016-05-01',
    });
    const familyId: string = setup.family.id;
    const childId: string = setup.child.id;
    const webhook = await call('POST', '/webhooks', {
      family_id: familyId,
      url: 'https://hooks.example.com/haven',
      events: ['child.came_of_age'],
    });
    const device = await call('POST', `/children/${childId}/devices`, { device_name: 'Phone' });
    const org = await createOrg(t.app, owner, 'Retained Inc');
    const key = await mintKey(t.app, owner, org.id);

    // Old only by the later day's cutoffs (today's run is over anyway); recent ones are
    // written ahead of time.
    await insert.viewing(childId, '2026-03-01T20:00:00Z');
    const newViewing = await insert.viewing(childId, '2027-04-01T20:00:00Z');
    await insert.report(childId, device.device.id, '2026-05-01T10:00:00Z');
    const newReport = await insert.report(childId, device.device.id, '2027-06-01T10:00:00Z');
    await insert.delivery(webhook.id, 'succeeded', '2026-05-02T10:00:00Z');
    const pending = await insert.delivery(webhook.id, 'pending', '2026-05-02T10:00:00Z');
    const newDelivery = await insert.delivery(webhook.id, 'failed', '2027-06-05T10:00:00Z');
    await insert.usage(org.id, key.id, '2026-04-01T10:00:00Z');
    const newUsage = await insert.usage(org.id, key.id, '2026-06-01T10:00:00Z');
    const receipts = {
      org: await insert.receipt('2026-04-01T10:00:00Z', { orgId: org.id }),
      person: await insert.receipt('2026-04-01T10:00:00Z'),
      // Dated by a test clock deleted since: the real clock dates it now.
      deletedClock: await insert.receipt('2026-04-01T10:00:00Z', { clockId: randomUUID() }),
      underWay: await insert.receipt('2026-04-01T10:00:00Z', { orgId: org.id, completed: false }),
      recent: await insert.receipt('2027-01-01T10:00:00Z', { orgId: org.id }),
    };

    // A family on a test clock that stays on the first day: the real clock's run takes only
    // its deliveries (Haven's own attempts, dated by the real clock), not what its clock dates.
    const testClock = await call('POST', '/sandbox/test-clocks', { frozen_time: START });
    const clocked = await call('POST', '/setup/quick', {
      child_name: 'Kit',
      birth_date: '2016-05-01',
      test_clock_id: testClock.id,
    });
    const clockedHook = await call('POST', '/webhooks', {
      family_id: clocked.family.id,
      url: 'https://hooks.example.com/haven',
      events: ['child.came_of_age'],
    });
    const clockedViewing = await insert.viewing(clocked.child.id, '2026-03-01T20:00:00Z');
    await insert.delivery(clockedHook.id, 'succeeded', '2026-05-02T10:00:00Z');

    const familyLog = `/families/${familyId}/audit-log`;
    const orgLog = `/developers/orgs/${org.id}/audit-log`;
    const clockedLog = `/families/${clocked.family.id}/audit-log`;
    const familyBefore = await chain(call, familyLog);
    const orgBefore = await chain(call, orgLog);
    const clockedBefore = await chain(call, clockedLog);
    expect(familyBefore.length).toBeGreaterThan(0);
    expect(orgBefore.length).toBeGreaterThan(0);

    t.clock.set(LATER);
    await until(() => finished(t, '2027-06-10') !== undefined, "the later day's purge never ran");

    expect(await remaining(db, childId, webhook.id)).toEqual({
      viewing: [newViewing],
      reports: [newReport],
      deliveries: [pending, newDelivery].sort(),
    });
    expect(await remaining(db, clocked.child.id, clockedHook.id)).toEqual({
      viewing: [clockedViewing],
      reports: [],
      deliveries: [],
    });
    const clockedChain = await chain(call, clockedLog);
    expect(clockedChain.slice(0, -1)).toEqual(clockedBefore);
    expect(clockedChain.at(-1)).toMatchObject({
      occurred_at: '2026-05-03T12:00:00.000Z',
      action: 'retention.purged',
      target: { type: 'family', id: clocked.family.id },
      changes: { webhook_deliveries: 1 },
    });
    expect(Object.keys(clockedChain.at(-1)?.changes ?? {})).toHaveLength(1);
    expect(chainHolds(clockedChain)).toBe(true);
    const usage = await db
      .selectFrom('developer_usage')
      .select('id')
      .where('org_id', '=', org.id)
      .execute();
    expect(usage.map((row) => row.id)).toEqual([newUsage]);
    const all = Object.values(receipts);
    expect(await receiptsLeft(db, all)).toEqual([receipts.underWay, receipts.recent].sort());

    // Every entry of both chains was older than 400 days: each chain is now its purge's entry,
    // linked to the last one removed.
    const family = await chain(call, familyLog);
    expect(family).toHaveLength(1);
    expect(family[0]).toMatchObject({
      seq: familyBefore.length + 1,
      occurred_at: '2027-06-10T08:00:00.000Z',
      action: 'retention.purged',
      actor: { type: 'system', id: 'haven', label: 'retention purge' },
      target: { type: 'family', id: familyId },
      changes: {
        viewing_history: 1,
        device_reports: 1,
        webhook_deliveries: 1,
        audit_entries: familyBefore.length,
      },
      prev_hash: familyBefore.at(-1)?.hash,
    });
    expect(Object.keys(family[0]?.changes ?? {})).toHaveLength(4);
    expect(chainHolds(family)).toBe(true);
    const orgChain = await chain(call, orgLog);
    expect(orgChain).toEqual([
      expect.objectContaining({
        seq: orgBefore.length + 1,
        action: 'retention.purged',
        target: { type: 'org', id: org.id },
        changes: { developer_usage: 1, erasure_receipts: 1, audit_entries: orgBefore.length },
        prev_hash: orgBefore.at(-1)?.hash,
      }),
    ]);
    expect(chainHolds(orgChain)).toBe(true);

    // Another process's run the same day (no memory of this one's): nothing is old any more.
    const backend = t.database.reopen ? { ...t.database, handle: t.database.reopen() } : t.database;
    const second = await buildTestApp({
      clock: new TestClock('2027-06-10T20:00:00Z'),
      tuning: { retentionRunPeriodMs: 10, ageRunPeriodMs: 3_600_000 },
      database: backend,
    });
    try {
      await until(() => finished(second, '2027-06-10') !== undefined, 'the second run never ran');
      expect(finished(second, '2027-06-10')).toMatchObject({ families: 0, orgs: 0, rows: 0 });
    } finally {
      await second.close();
      if (second.database !== t.database) {
        await second.database.handle.close();
      }
    }
    expect(await chain(call, familyLog)).toEqual(family);
    expect(await chain(call, orgLog)).toEqual(orgChain);
    expect(await chain(call, clockedLog)).toEqual(clockedChain);
    expect(await receiptsLeft(db, all)).toEqual([receipts.underWay, receipts.recent].sort());
  });
});
