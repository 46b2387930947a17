// Children whose birthday is today, stored straight into a PostgreSQL database with
// set-based SQL (one `insert ... select generate_series` a table): a family, a child whose
// applied age is the one before today's birthday, and an active policy generated for that
// age (`recommended`, the 20 `age` rules of rulesForAge) each, as quick setup a year ago
// would have left them. Optionally a crowd of other children whose birthday is another day.
// For the age run's kill test (test/age-run-kill.test.ts) and its bench (bench/age-run.ts).
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import type { Db } from '../src/db/connect.js';
import { rulesForAge } from '../src/modules/age/derivation.js';
import { loadCredentialCipher } from '../src/modules/connections/service.js';
import { newSigningSecret, secretBinding } from '../src/modules/webhooks/signing.js';

export interface DueChildrenOptions {
  /** Today, UTC (`YYYY-MM-DD`): the due children's birthday. */
  today: string;
  /** How many children have their birthday today. */
  due: number;
  /** The ages they turn today, given out in turn. */
  ages: readonly number[];
  /**
   * Children whose birthday is another day (families of two), ages 4-17, their next birthday
   * within the coming year and their applied age their age now.
   */
  others?: number;
  /** Of those, one in `otherPoliciesEvery` gets a policy with its 20 rules too. */
  otherPoliciesEvery?: number;
}

/** The 20 rules generated for each age 0-20, by age: what the SQL picks a policy's rules from. */
function rulesByAge(): string {
  const byAge: Record<string, unknown> = {};
  for (let age = 0; age <= 20; age++) {
    byAge[age] = rulesForAge(age, 'recommended').rules;
  }
  return JSON.stringify(byAge);
}

/**
 * Stores the children; returns the due families' ids (one child each). Names are unique to
 * this call, so it may run more than once on one database.
 */
export async function storeDueChildren(
  databaseUrl: string,
  options: DueChildrenOptions,
): Promise<{ familyIds: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const batch = `b${Date.now().toString(36)}`;
  const rules = rulesByAge();
  try {
    await client.query('begin');
    await client.query(
      `create temp table due_seed on commit drop as
       select gen_random_uuid() as family_id, gen_random_uuid() as child_id,
              gen_random_uuid() as policy_id, n,
              ($2::int[])[1 + n % array_length($2::int[], 1)] as age
       from generate_series(0, $1::int - 1) n`,
      [options.due, options.ages],
    );
    await client.query(
      `insert into families (id, name, org_id, environment, created_at, updated_at)
       select family_id, 'Birthday family ' || $1 || ' ' || n, null, 'test', now(), now()
       from due_seed`,
      [batch],
    );
    await client.query(
      `insert into children (id, family_id, name, birth_date, created_at, updated_at,
                             age_applied, next_age_change_on)
       select child_id, family_id, 'Birthday kid ' || n,
              ($1::date - make_interval(years => age))::date, now(), now(), age - 1, $1::date
       from due_seed`,
      [options.today],
    );
    await client.query(
      `insert into policies (id, child_id, name, status, priority, version, created_at,
                             updated_at, strictness)
       select policy_id, child_id, 'Protection', 'active', 0, 1, now(), now(), 'recommended'
       from due_seed`,
    );
    await client.query(
      `insert into policy_rules (id, policy_id, category, enabled, config, created_at,
                                 updated_at, origin)
       select gen_random_uuid(), d.policy_id, r->>'category', (r->>'enabled')::boolean,
              r->'config', now(), now(), 'age'
       from due_seed d, jsonb_array_elements($1::jsonb -> (d.age - 1)::text) r`,
      [rules],
    );
    const { rows } = await client.query<{ family_id: string }>(
      'select family_id from due_seed order by n',
    );
    if (options.others) {
      await storeOthers(client, batch, rules, options);
    }
    await client.query('commit');
    await client.query('analyze families, children, policies, policy_rules');
    return { familyIds: rows.map((row) => row.family_id) };
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}

/**
 * Children of every other birthday: born `age` years and 1-364 days before today (never on
 * 29 February, whose next birthday SQL's date arithmetic would place a day early), so none
 * is due; their next birthday is computed as Haven computes it for other dates.
 */
async function storeOthers(
  client: pg.Client,
  batch: string,
  rules: string,
  options: DueChildrenOptions,
): Promise<void> {
  const families = Math.ceil((options.others ?? 0) / 2);
  await client.query(
    `insert into families (id, name, org_id, environment, created_at, updated_at)
     select gen_random_uuid(), 'Other family ' || $1 || ' ' || n, null, 'test', now(), now()
     from generate_series(1, $2::int) n`,
    [batch, families],
  );
  await client.query(
    `insert into children (id, family_id, name, birth_date, created_at, updated_at,
                           age_applied, next_age_change_on)
     select gen_random_uuid(), f.id, 'Other kid ' || k, b.birth, now(), now(),
            extract(year from age($2::date, b.birth))::int,
            (b.birth + make_interval(years => extract(year from age($2::date, b.birth))::int + 1))::date
     from families f
     cross join generate_series(1, 2) k
     cross join lateral (
       select d + (to_char(d, 'MM-DD') = '02-29')::int as birth
       from (select ($2::date
                     - make_interval(years => 4 + abs(hashtext(f.id::text || k)) % 14)
                     - (1 + abs(hashtext(k || f.id::text)) % 364) * interval '1 day')::date as d) x
     ) b
     where f.name like 'Other family ' || $1 || ' %'
     limit $3::int`,
    [batch, options.today, options.others],
  );
  const every = options.otherPoliciesEvery;
  if (!every) {
    return;
  }
  await client.query(
    `create temp table other_policies on commit drop as
     select gen_random_uuid() as policy_id, c.id as child_id, c.age_applied as age
     from children c join families f on f.id = c.family_id
     where f.name like 'Other family ' || $1 || ' %' and abs(hashtext(c.id::text)) % $2::int = 0`,
    [batch, every],
  );
  await client.query(
    `insert into policies (id, child_id, name, status, priority, version, created_at,
                           updated_at, strictness)
     select policy_id, child_id, 'Protection', 'active', 0, 1, now(), now(), 'recommended'
     from other_policies`,
  );
  await client.query(
    `insert into policy_rules (id, policy_id, category, enabled, config, created_at,
                               updated_at, origin)
     select gen_random_uuid(), p.policy_id, r->>'category', (r->>'enabled')::boolean,
            r->'config', now(), now(), 'age'
     from other_policies p, jsonb_array_elements($1::jsonb -> p.age::text) r`,
    [rules],
  );
}

/** Whether generation gives other rules at `age` than at `age - 1` (a birthday changes the policy). */
export function rulesChangeAt(age: number): boolean {
  return !isDeepStrictEqual(rulesForAge(age - 1).rules, rulesForAge(age).rules);
}

/**
 * One webhook for `child.age_changed` to `url` in each family, its secret sealed as the API
 * seals one (a sandbox deployment's key, kept in the database).
 */
export async function storeWebhooks(db: Db, familyIds: readonly string[], url: string) {
  const cipher = await loadCredentialCipher(db, { appEnv: 'sandbox', credentialKeys: undefined });
  const now = new Date();
  const rows = familyIds.map((familyId) => {
    const id = randomUUID();
    const sealed = cipher.seal(newSigningSecret(), secretBinding(id));
    return {
      id,
      family_id: familyId,
      url,
      events: JSON.stringify(['child.age_changed']),
      secret: sealed.sealed,
      secret_key_id: sealed.keyId,
      active: true,
      failing_since: null,
      disabled_reason: null,
      created_at: now,
      updated_at: now,
    };
  });
  for (let at = 0; at < rows.length; at += 500) {
    await db
      .insertInto('webhooks')
      .values(rows.slice(at, at + 500))
      .execute();
  }
}
