import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { newSession } from '../../../test/identity.js';

describe('/auth/me and /auth/logout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('maps one (iss, sub) to one stable internal user', async () => {
    const session = await newSession(t.app);
    const me = await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth });
    expect(me.json()).toEqual({
      id: session.userId,
      email: expect.stringContaining('@'),
      name: expect.any(String),
      created_at: t.clock.now().toISOString(),
    });
    const again = await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth });
    expect(again.json().id).toBe(session.userId);
    const other = await newSession(t.app);
    expect(other.userId).not.toBe(session.userId);
  });

  it('logout is a no-op 204 that still needs a session', async () => {
    const session = await newSession(t.app);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: session.auth,
    });
    expect(res.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth })).statusCode).toBe(
      200,
    );
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(
      401,
    );
  });

  it('rejects an expired session token', async () => {
    const session = await newSession(t.app);
    t.clock.advance(3600_000 + 31_000);
    const res = await t.app.inject({ url: '/api/v1/auth/me', headers: session.auth });
    expect(res.json()).toEqual({
      error: 'Unauthorized',
      message: 'invalid or expired token',
      code: 401,
    });
  });
});
