import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { bearer, createOrg, mintKey, newSession, type Session } from '../../../test/identity.js';

describe('developer orgs and members', () => {
  let t: TestApp;
  let owner: Session;
  let stranger: Session;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await newSession(t.app);
    stranger = await newSession(t.app);
  });
  afterAll(async () => t.close());

  const post = (session: Session, url: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url, headers: session.auth, payload: payload as object });

  it('creates an org with the spec defaults and the caller as owner', async () => {
    const res = await post(owner, '/api/v1/developers/orgs', {
      name: 'Acme Parental Controls',
      website_url: 'https://acme.example',
    });
    expect(res.statusCode).toBe(201);
    const org = res.json();
    expect(org).toMatchObject({
      name: 'Acme Parental Controls',
      description: '',
      website_url: 'https://acme.example',
      logo_url: '',
      owner_user_id: owner.userId,
      tier: 'free',
      rate_limit_rpm: 100,
    });
    expect(org.slug).toMatch(/^acme-parental-controls-[a-z0-9]{6}$/);
    expect(org.created_at).toBe(org.updated_at);
    expect(org.created_at).toBe(t.clock.now().toISOString());

    const members = await t.app.inject({
      url: `/api/v1/developers/orgs/${org.id}/members`,
      headers: owner.auth,
    });
    expect(members.json()).toEqual([
      expect.objectContaining({ org_id: org.id, user_id: owner.userId, role: 'owner' }),
    ]);
  });

  it('draws a fresh suffix each time, so equal names do not collide', async () => {
    const a = await createOrg(t.app, owner, 'Same Name');
    const b = await createOrg(t.app, owner, 'Same Name');
    expect(a.slug).not.toBe(b.slug);
  });

  it('validates the body: name is required, sizes and URL', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name is required'],
      [{ name: '   ' }, 'name is required'],
      [{ name: 'x'.repeat(256) }, 'name must be at most 255 characters'],
      [
        { name: 'ok', website_url: 'javascript:alert(1)' },
        'website_url must be an absolute http(s) URL',
      ],
    ];
    for (const [payload, message] of cases) {
      const res = await post(owner, '/api/v1/developers/orgs', payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(message);
    }
  });

  it('lists only the caller’s orgs and hides others behind 404', async () => {
    const mine = await createOrg(t.app, owner, 'Mine');
    const list = await t.app.inject({ url: '/api/v1/developers/orgs', headers: stranger.auth });
    expect(list.json()).toEqual([]);
    const peek = await t.app.inject({
      url: `/api/v1/developers/orgs/${mine.id}`,
      headers: stranger.auth,
    });
    expect(peek.statusCode).toBe(404);
    expect(peek.json()).toEqual({
      error: 'Not Found',
      message: 'developer org not found',
      code: 404,
    });
    const bad = await t.app.inject({ url: '/api/v1/developers/orgs/nope', headers: owner.auth });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('invalid org ID');
  });

  it('refuses API keys and anonymous callers on management routes', async () => {
    const org = await createOrg(t.app, owner, 'Keyed');
    const key = await mintKey(t.app, owner, org.id);
    const withKey = await t.app.inject({
      url: '/api/v1/developers/orgs',
      headers: bearer(key.key),
    });
    expect(withKey.statusCode).toBe(401);
    expect(withKey.json().message).toBe('invalid or expired token');
    const viaHeader = await t.app.inject({
      url: '/api/v1/developers/orgs',
      headers: { 'x-api-key': key.key },
    });
    expect(viaHeader.statusCode).toBe(401);
    const anonymous = await t.app.inject({ url: '/api/v1/developers/orgs' });
    expect(anonymous.json()).toMatchObject({ code: 401, message: 'missing authorization header' });
    const basic = await t.app.inject({
      url: '/api/v1/developers/orgs',
      headers: { authorization: 'Basic abc' },
    });
    expect(basic.json()).toMatchObject({
      code: 401,
      message: 'invalid authorization header format',
    });
    const junk = await t.app.inject({
      url: '/api/v1/developers/orgs',
      headers: bearer('abc.def.ghi'),
    });
    expect(junk.json()).toMatchObject({ code: 401, message: 'invalid or expired token' });
  });

  it('manages members: roles, 403 for members, the last owner stays', async () => {
    const org = await createOrg(t.app, owner, 'Team');
    const admin = await newSession(t.app);
    const member = await newSession(t.app);
    const base = `/api/v1/developers/orgs/${org.id}/members`;
    expect((await post(owner, base, { user_id: admin.userId, role: 'admin' })).statusCode).toBe(
      201,
    );
    expect((await post(owner, base, { user_id: member.userId, role: 'member' })).statusCode).toBe(
      201,
    );
    expect((await post(owner, base, { user_id: member.userId, role: 'member' })).statusCode).toBe(
      409,
    );

    // A plain member reads but cannot change anything.
    expect((await t.app.inject({ url: base, headers: member.auth })).json()).toHaveLength(3);
    const denied = await post(member, base, { user_id: stranger.userId, role: 'member' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().message).toBe('insufficient role for this action');
    const memberKey = await post(member, `/api/v1/developers/orgs/${org.id}/keys`, {
      name: 'k',
      environment: 'test',
    });
    expect(memberKey.statusCode).toBe(403);

    // An admin manages keys and members, but not owners.
    expect(
      (
        await post(admin, `/api/v1/developers/orgs/${org.id}/keys`, {
          name: 'k',
          environment: 'test',
        })
      ).statusCode,
    ).toBe(201);
    expect((await post(admin, base, { user_id: stranger.userId, role: 'owner' })).statusCode).toBe(
      403,
    );
    const unknownUser = await post(owner, base, {
      user_id: '00000000-0000-4000-8000-000000000000',
      role: 'member',
    });
    expect(unknownUser.statusCode).toBe(404);

    const removeOwner = await t.app.inject({
      method: 'DELETE',
      url: `${base}/${owner.userId}`,
      headers: owner.auth,
    });
    expect(removeOwner.statusCode).toBe(409);
    expect(removeOwner.json().message).toBe('an org must keep at least one owner');
    const removeMember = await t.app.inject({
      method: 'DELETE',
      url: `${base}/${member.userId}`,
      headers: admin.auth,
    });
    expect(removeMember.statusCode).toBe(204);
    const gone = await t.app.inject({
      url: `/api/v1/developers/orgs/${org.id}`,
      headers: member.auth,
    });
    expect(gone.statusCode).toBe(404);
  });
});
