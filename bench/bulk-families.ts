// Stores families in bulk, straight into the bench's PostgreSQL database, so the children read
// can be measured with 1 000 and then 100 000 families stored (docs/decisions.md "Idle load and
// flat with data"). Each table gets one `insert ... select generate_series`; the families are
// spread like real ones: a third are users' own (with an owner member), a third belong to
// other orgs, a third to the bench org's other environment (stored beside the bench key's
// families, never listed to it). Half have two children.
import pg from 'pg';

const ISSUER = 'https://bench.invalid';

/** Adds families until `total` are stored; returns how many it added. */
export async function storeFamilies(
  databaseUrl: string,
  total: number,
  benchOrgId: string,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const stored = Number((await client.query('select count(*) as n from families')).rows[0].n);
    const adding = total - stored;
    if (adding <= 0) {
      return 0;
    }
    // Distinguishes this batch's names from an earlier one's (slugs and subjects are unique).
    const batch = `b${Date.now().toString(36)}`;
    const users = Math.max(1, Math.ceil(adding / 30));
    const orgs = Math.max(1, Math.ceil(adding / 300));
    await client.query('begin');
    await client.query(
      `insert into users (id, issuer, subject, created_at)
       select gen_random_uuid(), $1, $2 || '-' || n, now()
       from generate_series(1, $3::int) n`,
      [ISSUER, batch, users],
    );
    await client.query(
      `insert into developer_orgs (id, name, slug, owner_user_id, created_at, updated_at)
       select gen_random_uuid(), 'Bench org ' || n, 'bench-' || $1 || '-' || n,
              (select id from users where issuer = $2 and subject like $1 || '-%' limit 1),
              now(), now()
       from generate_series(1, $3::int) n`,
      [batch, ISSUER, orgs],
    );
    await client.query(
      `insert into families (id, name, org_id, environment, created_at, updated_at)
       select gen_random_uuid(), 'Bench family ' || $1 || ' ' || n,
              case n % 3
                when 0 then null
                when 1 then (array(select id from developer_orgs where slug like 'bench-' || $1 || '-%'))[1 + n % $3::int]
                else $4::uuid
              end,
              case n % 3 when 2 then 'live' else 'test' end,
              now() - n * interval '1 second', now()
       from generate_series(1, $2::int) n`,
      [batch, adding, orgs, benchOrgId],
    );
    await client.query(
      `insert into family_members (id, family_id, user_id, role, joined_at)
       select gen_random_uuid(), f.id, u.ids[1 + (row_number() over () % array_length(u.ids, 1))], 'owner', now()
       from families f,
            (select array(select id from users where issuer = $2 and subject like $1 || '-%') as ids) u
       where f.org_id is null and f.name like 'Bench family ' || $1 || ' %'`,
      [batch, ISSUER],
    );
    await client.query(
      `insert into children (id, family_id, name, birth_date, created_at, updated_at,
                             next_age_change_on)
       select gen_random_uuid(), f.id, 'Kid ' || k, date '2010-01-01' + (abs(hashtext(f.id::text || k)) % 4000),
              now(), now(),
              -- Not due during a bench: the age run has nothing to do for these rows.
              current_date + 1 + (abs(hashtext(f.id::text || k)) % 364)
       from families f, generate_series(1, 2) k
       where f.name like 'Bench family ' || $1 || ' %' and abs(hashtext(f.id::text)) % 2 = 0`,
      [batch],
    );
    await client.query('commit');
    // What autovacuum would soon do on its own: plans see the new table sizes.
    await client.query('analyze users, developer_orgs, families, family_members, children');
    return adding;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}
