import { describe, expect, it } from 'vitest';
import { DEMO_FAMILY_ID as SDK_DEMO_FAMILY_ID } from '../../../packages/sdk/src/sandbox.js';
import { buildTestApp } from '../../../test/app.js';
import { bearer, createOrg, mintKey, newSession } from '../../../test/identity.js';
import { DEMO_CHILDREN, DEMO_FAMILY_ID } from './demo-family.js';

describe('the sandbox demo family', () => {
  it('is there for every sandbox caller, with fixed ids and three bands', async () => {
    const t = await buildTestApp();
    try {
      t.clock.set('2026-06-01T00:00:00.000Z');
      const owner = await newSession(t.app);
      const key = await mintKey(t.app, owner, (await createOrg(t.app, owner)).id);
      for (const headers of [{}, { 'x-sandbox-session': 'fresh' }, owner.auth, bearer(key.key)]) {
        const ids = (await t.app.inject({ url: '/api/v1/families', headers }))
          .json()
          .map((f: { id: string }) => f.id);
        expect(ids).toContain(DEMO_FAMILY_ID);
      }
      const children = (
        await t.app.inject({ url: `/api/v1/families/${DEMO_FAMILY_ID}/children` })
      ).json();
      expect(children.map((c: { id: string }) => c.id).sort()).toEqual(
        DEMO_CHILDREN.map((c) => c.id).sort(),
      );
      expect(new Set(children.map((c: { age_group: string }) => c.age_group)).size).toBe(3);
      for (const child of DEMO_CHILDREN) {
        const policies = (
          await t.app.inject({ url: `/api/v1/children/${child.id}/policies` })
        ).json();
        expect(policies).toHaveLength(1);
        expect(policies[0].status).toBe('active');
        const rules = (
          await t.app.inject({ url: `/api/v1/policies/${policies[0].id}/rules` })
        ).json();
        expect(rules).toHaveLength(20);
      }
    } finally {
      await t.close();
    }
  });

  it('is read-only: every write is 403 "demo family is read-only"', async () => {
    const t = await buildTestApp();
    try {
      const child = DEMO_CHILDREN[0].id;
      const policyId = (await t.app.inject({ url: `/api/v1/children/${child}/policies` })).json()[0]
        .id;
      const writes: Array<[string, string, object | undefined]> = [
        ['PATCH', `/api/v1/families/${DEMO_FAMILY_ID}`, { name: 'Mine now' }],
        ['DELETE', `/api/v1/families/${DEMO_FAMILY_ID}`, undefined],
        [
          'POST',
          `/api/v1/families/${DEMO_FAMILY_ID}/children`,
          { name: 'X', birth_date: '2015-01-01' },
        ],
        ['PATCH', `/api/v1/children/${child}`, { name: 'Renamed' }],
        ['POST', `/api/v1/policies/${policyId}/pause`, undefined],
        [
          'PUT',
          `/api/v1/policies/${policyId}/rules/time_daily_limit`,
          { enabled: true, config: { daily_minutes: 1 } },
        ],
        [
          'POST',
          '/api/v1/setup/quick',
          { child_name: 'X', birth_date: '2015-01-01', family_id: DEMO_FAMILY_ID },
        ],
      ];
      for (const [method, url, payload] of writes) {
        const res = await t.app.inject({
          method: method as 'POST',
          url,
          ...(payload ? { payload } : {}),
        });
        expect({ url, method, status: res.statusCode, body: res.json() }).toEqual({
          url,
          method,
          status: 403,
          body: { error: 'Forbidden', message: 'demo family is read-only', code: 403 },
        });
      }
    } finally {
      await t.close();
    }
  });

  it('has the id @haven/sdk exports, which the console tells it by', () => {
    expect(SDK_DEMO_FAMILY_ID).toBe(DEMO_FAMILY_ID);
  });

  it('is seeded again, unchanged, on every start', async () => {
    const first = await buildTestApp();
    const second = await buildTestApp({ database: first.database, clock: first.clock });
    try {
      const count = await first.database.handle.db
        .selectFrom('children')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('family_id', '=', DEMO_FAMILY_ID)
        .executeTakeFirstOrThrow();
      expect(count.n).toBe(3);
    } finally {
      await second.app.close();
      await first.close();
    }
  });
});
