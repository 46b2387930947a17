// Migration 0021 (CONTRACT.md §11.1): existing rules are classified `age` or `custom`, and
// existing policies get the strictness they were generated with, from the rows as they were.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createBlankPGlite } from '../../test/database.js';
import { databaseUrlFor, withAdminClient } from '../../test/postgres-admin.js';
import { type GeneratedRule, rulesForAge, type Strictness } from '../modules/age/derivation.js';
import { connectPostgres, type Db } from './connect.js';
import { migrate, readMigrations } from './migrate.js';

const VERSION = '0021';
const adminUrl = process.env.DATABASE_URL;
const STRICTNESSES: Strictness[] = ['recommended', 'strict', 'relaxed'];

/** Rows written as the code before the migration wrote them (no origin, no strictness). */
class OldRows {
  constructor(private readonly db: Db) {}
  familyId = randomUUID();

  async family() {
    await sql`insert into families (id, name, org_id, environment, created_at, updated_at)
      values (${this.familyId}, 'Old', null, 'test', now(), now())`.execute(this.db);
  }

  async child(birthDate: string) {
    const id = randomUUID();
    await sql`insert into children (id, family_id, name, birth_date, avatar_url, created_at, updated_at)
      values (${id}, ${this.familyId}, 'Kid', ${birthDate}, null, now(), now())`.execute(this.db);
    return id;
  }

  /** Its `updated_at` is its latest rule's, as a rule's write bumps its policy. */
  async policy(childId: string, at: string, rules: Array<GeneratedRule & { at?: string }>) {
    const id = randomUUID();
    const updatedAt = rules.reduce(
      (latest, rule) => (rule.at && new Date(rule.at) > new Date(latest) ? rule.at : latest),
      at,
    );
    await sql`insert into policies (id, child_id, name, status, priority, version, created_at, updated_at)
      values (${id}, ${childId}, 'P', 'active', 0, 1, ${at}, ${updatedAt})`.execute(this.db);
    for (const rule of rules) {
      await sql`insert into policy_rules (id, policy_id, category, enabled, config, created_at, updated_at)
        values (${randomUUID()}, ${id}, ${rule.category}, ${rule.enabled},
          ${JSON.stringify(rule.config)}::jsonb, ${at}, ${rule.at ?? at})`.execute(this.db);
    }
    return id;
  }
}

const generated = (age: number, strictness: Strictness) => rulesForAge(age, strictness).rules;

/** `rules` with one category's rule replaced (stamped `at` when given). */
function edited(
  rules: GeneratedRule[],
  category: string,
  change: Partial<GeneratedRule>,
  at?: string,
) {
  return rules.map((rule) =>
    rule.category === category ? { ...rule, ...change, ...(at ? { at } : {}) } : rule,
  );
}

async function classification(db: Db, policyId: string) {
  const policy = await sql<{ strictness: string | null }>`
    select strictness from policies where id = ${policyId}`.execute(db);
  const rules = await sql<{ category: string; origin: string }>`
    select category, origin from policy_rules where policy_id = ${policyId}`.execute(db);
  return {
    strictness: policy.rows[0]?.strictness,
    origins: Object.fromEntries(rules.rows.map((row) => [row.category, row.origin])),
  };
}

const allAs = (rules: GeneratedRule[], origin: string, except: Record<string, string> = {}) =>
  Object.fromEntries(rules.map((rule) => [rule.category, except[rule.category] ?? origin]));

async function classifiesExistingRows(db: Db) {
  const all = await readMigrations();
  const before = all.filter((migration) => migration.version < VERSION);
  expect(all.some((migration) => migration.version === VERSION)).toBe(true);
  await migrate(db, before);
  const old = new OldRows(db);
  await old.family();
  const at = '2026-06-15T12:00:00.000Z';

  // Every age and strictness, as generated then and untouched: age rules, that strictness
  // (the SQL restating the generation agrees with the TypeScript everywhere).
  const untouched: Array<{ policyId: string; age: number; strictness: Strictness }> = [];
  for (let age = 0; age <= 19; age++) {
    const childId = await old.child(`${2026 - age}-03-10`);
    for (const strictness of STRICTNESSES) {
      const policyId = await old.policy(childId, at, generated(age, strictness));
      untouched.push({ policyId, age, strictness });
    }
  }

  // The age is the child's when each rule was last written: a rule edited after a birthday
  // does not make its untouched siblings look out of date.
  const leo = await old.child('2016-09-03');
  const nine = generated(9, 'recommended');
  const editedLater = await old.policy(
    leo,
    '2026-01-10T08:00:00.000Z',
    edited(nine, 'time_daily_limit', { config: { daily_minutes: 45 } }, '2026-10-01T08:00:00Z'),
  );
  // A 29 February child is still 12 on 28 February 2025, 13 on 1 March.
  const leap = await old.child('2012-02-29');
  const beforeLeapBirthday = await old.policy(
    leap,
    '2025-02-28T23:59:00Z',
    generated(12, 'strict'),
  );
  const wrongAgeForDay = await old.policy(leap, '2025-02-28T23:59:00Z', generated(13, 'strict'));
  const onLeapBirthday = await old.policy(leap, '2025-03-01T00:00:00Z', generated(13, 'strict'));

  // A strict policy whose daily limit was changed is still strict (19 of 20 rules say so).
  const teen = await old.child('2012-01-20');
  const strictFourteen = generated(14, 'strict');
  const strictEdited = await old.policy(
    teen,
    at,
    edited(strictFourteen, 'time_daily_limit', { config: { daily_minutes: 200 } }),
  );
  // A rule switched off, and a rule outside the 20: custom.
  const extra = await old.policy(teen, at, [
    ...edited(generated(14, 'recommended'), 'web_safesearch', { enabled: false }),
    { category: 'infinite_scroll_block', enabled: true, config: { enabled: true } },
  ]);
  // A policy made by hand (fewer than the 20) was never generated, even where a rule happens
  // to equal a generated one; and a policy without rules.
  const byHand = await old.policy(teen, at, [
    { category: 'web_safesearch', enabled: true, config: { enabled: true } },
    { category: 'time_daily_limit', enabled: true, config: { daily_minutes: 180 } },
  ]);
  const empty = await old.policy(teen, at, []);

  expect(await migrate(db)).toEqual([
    VERSION,
    ...all.filter((m) => m.version > VERSION).map((m) => m.version),
  ]);

  for (const { policyId, age, strictness } of untouched) {
    expect(await classification(db, policyId), `age ${age}, ${strictness}`).toEqual({
      strictness,
      origins: allAs(generated(age, strictness), 'age'),
    });
  }
  expect(await classification(db, editedLater)).toEqual({
    strictness: 'recommended',
    origins: allAs(nine, 'age', { time_daily_limit: 'custom' }),
  });
  expect(await classification(db, beforeLeapBirthday)).toMatchObject({
    strictness: 'strict',
    origins: allAs(generated(12, 'strict'), 'age'),
  });
  // Generated for 13 a minute early: the rules that differ between 12 and 13 are custom.
  const early = await classification(db, wrongAgeForDay);
  expect(early.origins.content_rating).toBe('custom');
  expect(early.origins.dm_restriction).toBe('custom');
  expect(early.origins.web_safesearch).toBe('age');
  expect(await classification(db, onLeapBirthday)).toMatchObject({
    strictness: 'strict',
    origins: allAs(generated(13, 'strict'), 'age'),
  });
  expect(await classification(db, strictEdited)).toEqual({
    strictness: 'strict',
    origins: allAs(strictFourteen, 'age', { time_daily_limit: 'custom' }),
  });
  expect(await classification(db, extra)).toEqual({
    strictness: 'recommended',
    origins: {
      ...allAs(generated(14, 'recommended'), 'age', { web_safesearch: 'custom' }),
      infinite_scroll_block: 'custom',
    },
  });
  expect(await classification(db, byHand)).toEqual({
    strictness: null,
    origins: { web_safesearch: 'custom', time_daily_limit: 'custom' },
  });
  expect(await classification(db, empty)).toEqual({ strictness: null, origins: {} });

  // Nothing of the migration's own machinery stays behind.
  const helpers = await sql<{ n: number }>`
    select count(*)::int as n from pg_proc where proname like 'haven_0021_%'`.execute(db);
  expect(helpers.rows[0]?.n).toBe(0);
  // From now on every writer must say who wrote a rule.
  const policyId = await old.policy(teen, at, []);
  await expect(
    sql`insert into policy_rules (id, policy_id, category, enabled, config, created_at, updated_at)
      values (${randomUUID()}, ${policyId}, 'web_safesearch', true, '{}', now(), now())`.execute(
      db,
    ),
  ).rejects.toThrow();
}

describe('migration 0021: rule origin and policy strictness', () => {
  it('classifies existing rows on the embedded engine', async () => {
    const handle = await createBlankPGlite();
    try {
      await classifiesExistingRows(handle.db);
    } finally {
      await handle.close();
    }
  });

  it.runIf(adminUrl)('classifies existing rows on PostgreSQL', async () => {
    const admin = adminUrl ?? '';
    const name = `haven_t_origin_${process.pid}`;
    await withAdminClient(admin, async (client) => {
      await client.query(`drop database if exists ${name} with (force)`);
      await client.query(`create database ${name}`);
    });
    const handle = connectPostgres(databaseUrlFor(admin, name));
    try {
      await classifiesExistingRows(handle.db);
    } finally {
      await handle.close();
      await withAdminClient(admin, (client) =>
        client.query(`drop database if exists ${name} with (force)`),
      );
    }
  });
});
