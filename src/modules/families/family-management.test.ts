import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, longSession, mintKey, type Session } from '../../../test/identity.js';
import { describeKeyAuthContract } from '../../../test/key-auth-contract.js';

describe('family management', () => {
  let t: TestApp;
  let owner: Session;
  let parent: Session;
  let guardian: Session;
  let stranger: Session;
  let familyId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    // Sessions that survive the clock moves of the birth-date cases.
    [owner, parent, guardian, stranger] = [
      await longSession(t),
      await longSession(t),
      await longSession(t),
      await longSession(t),
    ];
    familyId = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/families',
        headers: owner.auth,
        payload: { name: 'Okafor' },
      })
    ).json().id;
    for (const [who, role] of [
      [parent, 'parent'],
      [guardian, 'guardian'],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/families/${familyId}/members`,
        headers: owner.auth,
        payload: { user_id: who.userId, role },
      });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(async () => t.close());

  const as = (
    who: Session,
    method: 'GET' | 'PATCH' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: who.auth,
      ...(payload ? { payload } : {}),
    });

  it('reads for every member, writes for owners and parents, 403 for strangers', async () => {
    for (const who of [owner, parent, guardian]) {
      expect((await as(who, 'GET', `/families/${familyId}`)).json().name).toBeDefined();
    }
    const stranger403 = await as(stranger, 'GET', `/families/${familyId}`);
    expect(stranger403.json()).toEqual({
      error: 'Forbidden',
      message: 'not a member of this family',
      code: 403,
    });
    expect(
      (await as(parent, 'PATCH', `/families/${familyId}`, { name: 'Okafor-Lee' })).json().name,
    ).toBe('Okafor-Lee');
    const guardianWrite = await as(guardian, 'PATCH', `/families/${familyId}`, { name: 'x' });
    expect(guardianWrite.json()).toMatchObject({
      code: 403,
      message: 'insufficient role for this action',
    });
    const unknown = await as(owner, 'GET', '/families/00000000-0000-4000-8000-000000000000');
    expect(unknown.json()).toMatchObject({ code: 404, message: 'family not found' });
    expect((await as(owner, 'GET', '/families/not-a-uuid')).json().message).toBe(
      'invalid family ID',
    );
  });

  it('keeps at least one owner', async () => {
    const members = (await as(owner, 'GET', `/families/${familyId}/members`)).json();
    expect(members).toHaveLength(3);
    const ownerMember = members.find((m: { role: string }) => m.role === 'owner');
    const demote = await as(owner, 'PATCH', `/families/${familyId}/members/${ownerMember.id}`, {
      role: 'parent',
    });
    expect(demote.json()).toEqual({
      error: 'Conflict',
      message: 'a family must keep at least one owner',
      code: 409,
    });
    const remove = await as(owner, 'DELETE', `/families/${familyId}/members/${ownerMember.id}`);
    expect(remove.statusCode).toBe(409);
    const parentMember = members.find((m: { role: string }) => m.role === 'parent');
    expect(
      (
        await as(owner, 'PATCH', `/families/${familyId}/members/${parentMember.id}`, {
          role: 'owner',
        })
      ).json().role,
    ).toBe('owner');
    // Two owners now: the first may step down.
    expect(
      (
        await as(owner, 'PATCH', `/families/${familyId}/members/${ownerMember.id}`, {
          role: 'parent',
        })
      ).statusCode,
    ).toBe(200);
    const dup = await as(parent, 'POST', `/families/${familyId}/members`, {
      user_id: guardian.userId,
      role: 'parent',
    });
    expect(dup.statusCode).toBe(409);
  });

  it('manages children with strict birth dates', async () => {
    t.clock.set('2026-06-15T12:00:00.000Z');
    const create = (payload: object) =>
      as(parent, 'POST', `/families/${familyId}/children`, payload);
    const res = await create({ name: '  Ada  ', birth_date: '2015-06-16' });
    expect(res.statusCode).toBe(201);
    const child = res.json();
    expect(child).toMatchObject({
      name: 'Ada',
      family_id: familyId,
      birth_date: '2015-06-16T00:00:00.000Z',
      age: 10,
      age_group: 'preteen',
      // Tomorrow the age changes (the family's clock: 2026-06-15).
      next_age_change_on: '2026-06-16',
      avatar_url: null,
    });
    const cases: Array<[object, number, string]> = [
      [{ name: 'x', birth_date: '2015-13-01' }, 400, 'invalid birth_date format, use YYYY-MM-DD'],
      [{ name: 'x', birth_date: '2023-02-30' }, 400, 'invalid birth_date format, use YYYY-MM-DD'],
      [{ name: 'x', birth_date: '15-06-2015' }, 400, 'invalid birth_date format, use YYYY-MM-DD'],
      [
        { name: 'x', birth_date: '2015-06-16T00:00:00Z' },
        400,
        'invalid birth_date format, use YYYY-MM-DD',
      ],
      [{ name: 'x', birth_date: '2026-06-16' }, 422, 'birth date cannot be in the future'],
      [
        { name: 'x', birth_date: '1990-01-01' },
        422,
        'birth date seems too far in the past for a child',
      ],
      [{ birth_date: '2015-06-16' }, 400, 'name is required'],
      [{ name: 'x' }, 400, 'birth_date is required'],
      [{ name: 'x', birth_date: 20150616 }, 400, 'birth_date must be a string'],
      [
        { name: 'x', birth_date: '2015-06-16', avatar_url: 'ftp://x' },
        400,
        'avatar_url must be an absolute http(s) URL',
      ],
    ];
    for (const [payload, status, message] of cases) {
      const bad = await create(payload);
      expect({ payload, status: bad.statusCode, message: bad.json().message }).toEqual({
        payload,
        status,
        message,
      });
    }
    expect((await as(guardian, 'GET', `/families/${familyId}/children`)).json()).toHaveLength(1);
    expect(
      (
        await as(guardian, 'POST', `/families/${familyId}/children`, {
          name: 'y',
          birth_date: '2015-01-01',
        })
      ).statusCode,
    ).toBe(403);
    expect((await as(stranger, 'GET', `/families/${familyId}/children`)).statusCode).toBe(403);

    const patched = await as(owner, 'PATCH', `/children/${child.id}`, { birth_date: '2012-01-01' });
    expect(patched.json()).toMatchObject({
      age: 14,
      age_group: 'teen',
      name: 'Ada',
      next_age_change_on: '2027-01-01',
    });
    const ratings = await as(guardian, 'GET', `/children/${child.id}/age-ratings`);
    expect(ratings.json()).toEqual({
      age: 14,
      age_group: 'teen',
      max_ratings: { mpaa: 'PG-13', tvpg: 'TV-14', esrb: 'T', pegi: '12', csm: '13+' },
    });
    expect((await as(stranger, 'GET', `/children/${child.id}`)).statusCode).toBe(403);
    expect((await as(owner, 'DELETE', `/children/${child.id}`)).statusCode).toBe(204);
    expect((await as(owner, 'GET', `/children/${child.id}`)).json().message).toBe(
      'child not found',
    );
  });

  it('deletes a family with its children (owner only)', async () => {
    const id = (await as(owner, 'POST', '/families', { name: 'Short-lived' })).json().id;
    const kid = (
      await as(owner, 'POST', `/families/${id}/children`, { name: 'K', birth_date: '2020-01-01' })
    ).json();
    expect((await as(owner, 'DELETE', `/families/${id}`)).statusCode).toBe(204);
    expect((await as(owner, 'GET', `/families/${id}`)).statusCode).toBe(404);
    expect((await as(owner, 'GET', `/children/${kid.id}`)).statusCode).toBe(404);
  });

  it('hides another org’s families and children from a key (404)', async () => {
    const orgOwner = await longSession(t);
    const org = await createOrg(t.app, orgOwner);
    const key = await mintKey(t.app, orgOwner, org.id);
    const foreign = await t.app.inject({
      url: `/api/v1/developer/families/${familyId}`,
      headers: bearer(key.key),
    });
    expect(foreign.json()).toMatchObject({ code: 404, message: 'family not found' });
    const mine = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/developer/families',
        headers: bearer(key.key),
        payload: { name: 'Org Family' },
      })
    ).json();
    const kid = await t.app.inject({
      method: 'POST',
      url: `/api/v1/developer/families/${mine.id}/children`,
      headers: bearer(key.key),
      payload: { name: 'Kid', birth_date: '2018-03-03' },
    });
    expect(kid.statusCode).toBe(201);
    // The family's users do not see the org's family, and vice versa.
    expect((await as(owner, 'GET', `/families/${mine.id}`)).statusCode).toBe(403);
  });
});

async function orgFamilyFixture(fixture: { app: TestApp['app']; key: { key: string } }) {
  const family = await fixture.app.inject({
    method: 'POST',
    url: '/api/v1/developer/families',
    headers: bearer(fixture.key.key),
    payload: { name: 'Contract Family' },
  });
  return family.json().id as string;
}

describeKeyAuthContract({
  name: 'GET /api/v1/developer/families/{familyID}/children',
  scope: 'read:children',
  okStatus: 200,
  request: async (fixture) => ({
    method: 'GET',
    url: `/api/v1/developer/families/${await orgFamilyFixture(fixture)}/children`,
  }),
  foreignRequest: async (fixture) => ({
    method: 'GET',
    url: `/api/v1/developer/families/${await orgFamilyFixture({ app: fixture.app, key: fixture.otherKey })}/children`,
  }),
});
