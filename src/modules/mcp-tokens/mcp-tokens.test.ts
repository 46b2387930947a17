import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, newSession, type Session } from '../../../test/identity.js';
import { hashSecret } from '../../auth/secrets.js';
import { DEMO_CHILDREN, DEMO_FAMILY_ID } from '../demo/demo-family.js';

describe('MCP tokens', () => {
  let t: TestApp;
  let alice: Session;
  let bob: Session;
  let aliceFamily: string;
  let aliceOtherFamily: string;
  let bobFamily: string;
  beforeAll(async () => {
    t = await buildTestApp();
    alice = await newSession(t.app);
    bob = await newSession(t.app);
    const family = async (session: Session, name: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/families',
          headers: session.auth,
          payload: { name },
        })
      ).json().id as string;
    aliceFamily = await family(alice, 'Alice One');
    aliceOtherFamily = await family(alice, 'Alice Two');
    bobFamily = await family(bob, 'Bob');
  });
  afterAll(async () => t.close());

  const mint = (session: Session, familyId: string, label = 'claude desktop') =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: session.auth,
      payload: { family_id: familyId, label },
    });

  it('mints a token bound to the user and one family, shown once, stored hashed', async () => {
    const res = await mint(alice, aliceFamily);
    expect(res.statusCode).toBe(201);
    const { token, plain } = res.json();
    expect(plain).toMatch(/^svcmcp_[0-9A-Za-z]{40}$/);
    expect(token).toMatchObject({
      user_id: alice.userId,
      family_id: aliceFamily,
      label: 'claude desktop',
      revoked_at: null,
    });
    expect(token.token_prefix).toBe(plain.slice(0, 'svcmcp_'.length + 8));
    const listed = (await t.app.inject({ url: '/api/v1/mcp/tokens', headers: alice.auth })).json();
    expect(listed.map((x: { id: string }) => x.id)).toContain(token.id);
    expect(JSON.stringify(listed)).not.toContain(plain);
    const stored = await t.database.handle.db
      .selectFrom('mcp_tokens')
      .selectAll()
      .where('id', '=', token.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).toBe(hashSecret(plain));
  });

  it('acts as its user for its family only', async () => {
    const { plain } = (await mint(alice, aliceFamily)).json();
    const families = await t.app.inject({ url: '/api/v1/families', headers: bearer(plain) });
    expect(families.statusCode).toBe(200);
    expect(families.json().map((f: { id: string }) => f.id)).toEqual([aliceFamily]);
    expect(families.json().map((f: { id: string }) => f.id)).not.toContain(aliceOtherFamily);
    // Not a management credential, and not a key.
    expect(
      (await t.app.inject({ url: '/api/v1/developers/orgs', headers: bearer(plain) })).statusCode,
    ).toBe(401);
    expect(
      (await t.app.inject({ url: '/api/v1/developer/families', headers: bearer(plain) }))
        .statusCode,
    ).toBe(403);
  });

  it('cannot be bound to a family the caller does not belong to', async () => {
    expect((await mint(alice, bobFamily)).statusCode).toBe(404);
    expect((await mint(alice, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await mint(alice, 'nope')).statusCode).toBe(400);
    expect((await mint(alice, aliceFamily, '')).statusCode).toBe(400);
  });

  it('may be bound to the sandbox demo family, which it then reads as its user does and cannot change', async () => {
    const res = await mint(alice, DEMO_FAMILY_ID, 'try the demo');
    expect(res.statusCode, res.body).toBe(201);
    const { token, plain } = res.json();
    expect(token).toMatchObject({ user_id: alice.userId, family_id: DEMO_FAMILY_ID });
    const get = (url: string) => t.app.inject({ url, headers: bearer(plain) });
    // Its one family is the demo family: none of its user's own.
    expect((await get('/api/v1/families')).json().map((f: { id: string }) => f.id)).toEqual([
      DEMO_FAMILY_ID,
    ]);
    expect((await get(`/api/v1/families/${DEMO_FAMILY_ID}`)).json().name).toBe(
      'Rivera Family (demo)',
    );
    const children = (await get(`/api/v1/families/${DEMO_FAMILY_ID}/children`)).json();
    expect(children.map((c: { id: string }) => c.id).sort()).toEqual(
      DEMO_CHILDREN.map((c) => c.id).sort(),
    );
    const child = DEMO_CHILDREN[0].id;
    expect((await get(`/api/v1/children/${child}`)).statusCode).toBe(200);
    const policies = (await get(`/api/v1/children/${child}/policies`)).json();
    expect((await get(`/api/v1/policies/${policies[0].id}/rules`)).json()).toHaveLength(20);
    expect((await get(`/api/v1/families/${aliceFamily}`)).json()).toMatchObject({
      code: 404,
      message: 'family not found',
    });
    const rename = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/families/${DEMO_FAMILY_ID}`,
      headers: bearer(plain),
      payload: { name: 'Mine now' },
    });
    expect(rename.json()).toEqual({
      error: 'Forbidden',
      message: 'demo family is read-only',
      code: 403,
    });
  });

  it('keeps a token on its own family away from the demo family', async () => {
    const { plain } = (await mint(alice, aliceFamily)).json();
    for (const url of [
      `/api/v1/families/${DEMO_FAMILY_ID}`,
      `/api/v1/families/${DEMO_FAMILY_ID}/children`,
      `/api/v1/children/${DEMO_CHILDREN[0].id}`,
    ]) {
      const res = await t.app.inject({ url, headers: bearer(plain) });
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('is 401 "invalid or expired token" after revocation, and only its owner can revoke', async () => {
    const { token, plain } = (await mint(alice, aliceFamily)).json();
    const byBob = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/mcp/tokens/${token.id}`,
      headers: bob.auth,
    });
    expect(byBob.statusCode).toBe(404);
    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/mcp/tokens/${token.id}`,
      headers: alice.auth,
    });
    expect(revoke.statusCode).toBe(204);
    const after = await t.app.inject({ url: '/api/v1/families', headers: bearer(plain) });
    expect(after.json()).toEqual({
      error: 'Unauthorized',
      message: 'invalid or expired token',
      code: 401,
    });
    const listed = (await t.app.inject({ url: '/api/v1/mcp/tokens', headers: alice.auth })).json();
    expect(listed.find((x: { id: string }) => x.id === token.id).revoked_at).not.toBeNull();
  });

  it('answers an unknown token with 401', async () => {
    const res = await t.app.inject({
      url: '/api/v1/families',
      headers: bearer(`svcmcp_${'Z'.repeat(40)}`),
    });
    expect(res.json()).toMatchObject({ code: 401, message: 'invalid or expired token' });
  });
});
