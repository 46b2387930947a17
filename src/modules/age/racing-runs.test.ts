// CONTRACT.md §11.1 "a birthday is applied exactly once per child and age, whatever the
// number of instances and workers": two app instances on one database, each running the
// real clock's age run every 20 ms, take the same day's 200 birthdays at once. Each child is
// applied by one of them: its policy version rises once, one `child.age_changed` message is
// stored for it, and its applied age is the new one. On PostgreSQL the two instances have
// their own connection pools (claimDueChildren's SKIP LOCKED shares the children out); on PGlite
// they share the one embedded connection, so their runs interleave one transaction at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { longSession, type Session } from '../../../test/identity.js';

const CHILDREN = 200;
/** The day before the children's 13th birthday, then the birthday itself (UTC). */
const EVE = '2026-03-09T12:00:00.000Z';
const BIRTHDAY = '2026-03-10T00:30:00.000Z';
const BIRTH_DATE = '2013-03-10';
const tuning = { ageRunPeriodMs: 20 };

describe('two instances running the age run on one database', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: Session;
  beforeAll(async () => {
    a = await buildTestApp({ clock: new TestClock(EVE), tuning });
    const backend = a.database.reopen ? { ...a.database, handle: a.database.reopen() } : a.database;
    b = await buildTestApp({ clock: new TestClock(EVE), tuning, database: backend });
    owner = await longSession(a);
  });
  afterAll(async () => {
    await b?.close();
    if (b && b.database !== a?.database) {
      await b.database.handle.close();
    }
    await a?.close();
  });

  async function call(method: 'GET' | 'POST', url: string, payload?: unknown) {
    const res = await a.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: owner.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  }

  /** How many runs' children each instance's log says it applied. */
  const appliedBy = (t: TestApp) =>
    t.logs
      .filter((line) => line.msg === 'age changes applied')
      .reduce((sum, line) => sum + Number(line.applied), 0);

  it('applies each birthday once: one version, one message, the new age', async () => {
    const db = a.database.handle.db;
    const policyIds: string[] = [];
    const familyIds: string[] = [];
    for (let n = 0; n < CHILDREN; n++) {
      if (n > 0 && n % 45 === 0) {
        a.clock.advance(61_000); // a new rate-limit window (100 a minute), still the eve
      }
      const setup = await call('POST', '/setup/quick', {
        child_name: `Racer ${n}`,
        birth_date: BIRTH_DATE,
      });
      await call('POST', '/webhooks', {
        family_id: setup.family.id,
        url: 'https://hooks.example.com/haven',
        events: ['child.age_changed'],
      });
      policyIds.push(setup.policy.id);
      familyIds.push(setup.family.id);
    }
    const before = new Map(
      (await db.selectFrom('policies').select(['id', 'version']).execute()).map((p) => [
        p.id,
        p.version,
      ]),
    );
    // Ours only: the sandbox's demo family has children too, due on another day.
    const children = await db
      .selectFrom('children')
      .select(['id', 'age_applied', 'next_age_change_on'])
      .where('family_id', 'in', familyIds)
      .execute();
    expect(children).toHaveLength(CHILDREN);
    for (const child of children) {
      expect(child).toMatchObject({ age_applied: 12, next_age_change_on: '2026-03-10' });
    }
    // Nothing is due on the eve: both runs have been looking and found nothing.
    expect(appliedBy(a) + appliedBy(b)).toBe(0);

    a.clock.set(BIRTHDAY);
    b.clock.set(BIRTHDAY);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { due } = await db
        .selectFrom('children')
        .select((eb) => eb.fn.countAll<number>().as('due'))
        .where('next_age_change_on', '<=', '2026-03-10')
        .where('family_id', 'in', familyIds)
        .executeTakeFirstOrThrow();
      if (Number(due) === 0) {
        break;
      }
      expect(Date.now(), `${due} children still due`).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Each run logs what it applied once it finds nothing more: wait for both logs to add up.
    for (;;) {
      if (appliedBy(a) + appliedBy(b) >= CHILDREN) {
        break;
      }
      expect(Date.now(), 'the runs never logged every child').toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    const after = await db
      .selectFrom('children')
      .select(['id', 'age_applied', 'next_age_change_on'])
      .where('family_id', 'in', familyIds)
      .execute();
    expect(after.filter((child) => child.age_applied !== 13)).toEqual([]);
    expect(after.filter((child) => child.next_age_change_on !== '2027-03-10')).toEqual([]);

    const versions = await db
      .selectFrom('policies')
      .select(['id', 'version'])
      .where('id', 'in', policyIds)
      .execute();
    expect(versions).toHaveLength(CHILDREN);
    expect(versions.filter((p) => p.version !== (before.get(p.id) ?? 0) + 1)).toEqual([]);

    const messages = await db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
      .select(['webhooks.family_id', 'webhook_deliveries.payload'])
      .where('webhook_deliveries.attempt', '=', 1)
      .where('webhook_deliveries.event', '=', 'child.age_changed')
      .execute();
    const perChild = new Map<string, number>();
    for (const message of messages) {
      const body = JSON.parse(message.payload) as { data: { child_id: string; age: number } };
      expect(body.data.age).toBe(13);
      perChild.set(body.data.child_id, (perChild.get(body.data.child_id) ?? 0) + 1);
    }
    expect(perChild.size).toBe(CHILDREN);
    expect([...perChild.values()].filter((count) => count !== 1)).toEqual([]);
    expect(new Set(messages.map((m) => m.family_id)).size).toBe(familyIds.length);

    // Both instances took part, and between them applied each child once.
    expect(appliedBy(a) + appliedBy(b)).toBe(CHILDREN);
    expect(appliedBy(a)).toBeGreaterThan(0);
    expect(appliedBy(b)).toBeGreaterThan(0);
  });
});
