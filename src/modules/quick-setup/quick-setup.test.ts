import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, longSession, mintKey, type Session } from '../../../test/identity.js';
import { QUICK_SETUP_CATEGORIES } from '../../../test/quick-setup-categories.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';

describe('POST /api/v1/setup/quick', () => {
  let t: TestApp;
  let owner: Session;
  beforeAll(async () => {
    t = await buildTestApp();
    t.clock.set('2026-06-01T12:00:00.000Z');
    owner = await longSession(t);
  });
  afterAll(async () => t.close());

  const quick = (
    payload: object,
    headers: Record<string, string> = { 'x-sandbox-session': 'qs' },
  ) => t.app.inject({ method: 'POST', url: '/api/v1/setup/quick', headers, payload });

  it('creates a family, a child, an active policy and exactly 20 rules (open in the sandbox)', async () => {
    const res = await quick({ child_name: 'Leo', birth_date: '2015-01-10' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.family.name).toBe("Leo's Family");
    expect(body.child).toMatchObject({ name: 'Leo', birth_date: '2015-01-10T00:00:00.000Z' });
    expect(body.policy).toMatchObject({ name: "Leo's Protection Policy", status: 'active' });
    expect(body.rules.map((r: { category: string }) => r.category)).toEqual(QUICK_SETUP_CATEGORIES);
    expect(body.age_group).toBe('preteen');
    expect(body.max_ratings).toEqual({
      mpaa: 'PG',
      tvpg: 'TV-PG',
      esrb: 'E10+',
      pegi: '7',
      csm: '10+',
    });
    expect(body.rule_summary).toEqual({
      screen_time_minutes: 120,
      bedtime_hour: 21,
      web_filter_level: 'moderate',
      content_rating: 'PG',
      total_rules_enabled: 20,
    });
    // The session's data: visible to the same sandbox session only.
    const families = await t.app.inject({
      url: '/api/v1/families',
      headers: { 'x-sandbox-session': 'qs' },
    });
    expect(families.json().map((f: { id: string }) => f.id)).toContain(body.family.id);
    const other = await t.app.inject({
      url: '/api/v1/families',
      headers: { 'x-sandbox-session': 'unused-qs' },
    });
    expect(other.json().map((f: { id: string }) => f.id)).toEqual([DEMO_FAMILY_ID]);
  });

  it('changes values with strictness, never the rule count', async () => {
    for (const [strictness, minutes, level] of [
      ['strict', 84, 'strict'],
      ['relaxed', 156, 'light'],
      ['recommended', 120, 'moderate'],
    ] as const) {
      const body = (
        await quick({ child_name: `S-${strictness}`, birth_date: '2015-01-10', strictness })
      ).json();
      expect(body.rules).toHaveLength(20);
      expect(body.rule_summary).toMatchObject({
        screen_time_minutes: minutes,
        web_filter_level: level,
      });
    }
  });

  it('without family_id, every call creates a new family and child', async () => {
    const a = (await quick({ child_name: 'Twin', birth_date: '2016-02-02' })).json();
    const b = (await quick({ child_name: 'Twin', birth_date: '2016-02-02' })).json();
    expect(a.family.id).not.toBe(b.family.id);
    expect(a.child.id).not.toBe(b.child.id);
  });

  it('with family_id, returns the same child and policy for the same name and birth date', async () => {
    const first = (
      await quick(
        { child_name: 'Noa', birth_date: '2012-05-05', family_name: 'The Bergs' },
        owner.auth,
      )
    ).json();
    expect(first.family.name).toBe('The Bergs');
    const again = await quick(
      { child_name: 'Noa', birth_date: '2012-05-05', family_id: first.family.id },
      owner.auth,
    );
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({
      child: { id: first.child.id },
      policy: { id: first.policy.id },
    });
    const sibling = (
      await quick(
        { child_name: 'Eli', birth_date: '2018-05-05', family_id: first.family.id },
        owner.auth,
      )
    ).json();
    expect(sibling.family.id).toBe(first.family.id);
    expect(sibling.child.id).not.toBe(first.child.id);
    expect(sibling.age_group).toBe('child');
  });

  it('repairs a half-created child: a child left without its policy gets it on the next call', async () => {
    const family = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/families',
        headers: owner.auth,
        payload: { name: 'Half' },
      })
    ).json();
    // What a crash between the child and its rules leaves behind: the child alone.
    const orphan = (
      await t.app.inject({
        method: 'POST',
        url: `/api/v1/families/${family.id}/children`,
        headers: owner.auth,
        payload: { name: 'Orla', birth_date: '2013-09-09' },
      })
    ).json();
    const repaired = (
      await quick(
        { child_name: 'Orla', birth_date: '2013-09-09', family_id: family.id },
        owner.auth,
      )
    ).json();
    expect(repaired.child.id).toBe(orphan.id);
    expect(repaired.rules).toHaveLength(20);
    const policies = await t.app.inject({
      url: `/api/v1/children/${orphan.id}/policies`,
      headers: owner.auth,
    });
    expect(policies.json()).toHaveLength(1);
    // And a policy left with only some of its rules is completed, once.
    const policyId = repaired.policy.id;
    await t.database.handle.db
      .deleteFrom('policy_rules')
      .where('policy_id', '=', policyId)
      .where('category', 'in', ['age_gate', 'web_safesearch'])
      .execute();
    const completed = (
      await quick(
        { child_name: 'Orla', birth_date: '2013-09-09', family_id: family.id },
        owner.auth,
      )
    ).json();
    expect(completed.rules).toHaveLength(20);
    const policy = (
      await t.app.inject({ url: `/api/v1/policies/${policyId}`, headers: owner.auth })
    ).json();
    expect(policy.version).toBe(2);
  });

  it('refuses bad input with the contract’s messages', async () => {
    const cases: Array<[object, number, string]> = [
      [{ birth_date: '2015-01-01' }, 400, 'child_name is required'],
      [{ child_name: 'X' }, 400, 'birth_date is required'],
      [
        { child_name: 'X', birth_date: 'not-a-date' },
        400,
        'invalid birth_date format, use YYYY-MM-DD',
      ],
      [{ child_name: 'X', birth_date: '2030-01-01' }, 422, 'birth date cannot be in the future'],
      [
        { child_name: 'X', birth_date: '2015-01-01', strictness: 'lax' },
        400,
        'strictness must be one of: relaxed, recommended, strict',
      ],
    ];
    for (const [payload, status, message] of cases) {
      const res = await quick(payload);
      expect({ status: res.statusCode, message: res.json().message }).toEqual({ status, message });
    }
    const stranger = await longSession(t);
    const theirs = (await quick({ child_name: 'Z', birth_date: '2015-01-01' }, owner.auth)).json();
    expect(
      (
        await quick(
          { child_name: 'Z', birth_date: '2015-01-01', family_id: theirs.family.id },
          stranger.auth,
        )
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await quick(
          {
            child_name: 'Z',
            birth_date: '2015-01-01',
            family_id: '00000000-0000-4000-8000-000000000000',
          },
          owner.auth,
        )
      ).statusCode,
    ).toBe(404);
  });

  it('works with a key: the family is the org’s', async () => {
    const org = await createOrg(t.app, owner);
    const key = await mintKey(t.app, owner, org.id);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/developer/setup/quick',
      headers: bearer(key.key),
      payload: { child_name: 'K', birth_date: '2019-01-01' },
    });
    expect(res.statusCode).toBe(201);
    const families = await t.app.inject({
      url: '/api/v1/developer/families',
      headers: bearer(key.key),
    });
    expect(families.json().map((f: { id: string }) => f.id)).toEqual([
      res.json().family.id,
      DEMO_FAMILY_ID,
    ]);
  });
});
