import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { bearer, createOrg, mintKey, newSession, type Session } from '../../test/identity.js';
import { createAuditedWrites } from '../modules/audit/audited-writes.js';
import { createOrgsService } from '../modules/orgs/service.js';
import { createUsersService } from '../modules/users/service.js';

async function hammer(count: number, request: () => Promise<{ statusCode: number }>) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    statuses.push((await request()).statusCode);
  }
  return statuses;
}

describe('rate limits (CONTRACT.md §4)', () => {
  let t: TestApp;
  let owner: Session;
  let orgId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    owner = await newSession(t.app);
    orgId = (await createOrg(t.app, owner)).id;
  });
  afterAll(async () => t.close());

  it('shares one org bucket between all keys of the org: 100 pass, the 101st is 429', async () => {
    const one = await mintKey(t.app, owner, orgId);
    const two = await mintKey(t.app, owner, orgId);
    const start = Math.ceil(t.clock.now().getTime() / 1000);
    for (let i = 0; i < 100; i++) {
      const key = i % 2 === 0 ? one : two;
      const res = await t.app.inject({
        url: '/api/v1/developer/families',
        headers: bearer(key.key),
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('100');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(99 - i));
      expect(res.headers['x-ratelimit-reset']).toBe(String(start + 60));
    }
    const refused = await t.app.inject({
      url: '/api/v1/developer/families',
      headers: bearer(one.key),
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: 'Too Many Requests',
      message: 'rate limit exceeded',
      code: 429,
    });
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');

    // The window slides: 30 s later nothing has left; at 60 s the first ones have.
    t.clock.advance(30_000);
    const still = await t.app.inject({
      url: '/api/v1/developer/families',
      headers: bearer(two.key),
    });
    expect(still.statusCode).toBe(429);
    expect(still.headers['retry-after']).toBe('30');
    t.clock.advance(30_000);
    const back = await t.app.inject({
      url: '/api/v1/developer/families',
      headers: bearer(two.key),
    });
    expect(back.statusCode).toBe(200);
  });

  it('limits session users by user, 100 a minute, with the house envelope', async () => {
    const user = await newSession(t.app);
    const statuses = await hammer(101, () =>
      t.app.inject({ url: '/api/v1/families', headers: user.auth }),
    );
    // newSession already spent one request of this user's bucket (GET /auth/me).
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    const refused = await t.app.inject({ url: '/api/v1/families', headers: user.auth });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().message).toBe('rate limit exceeded');
    t.clock.advance(60_000);
  });

  it('limits unauthenticated callers by IP with a plain-text 429', async () => {
    const ip = '203.0.113.7';
    const anonymous = () => t.app.inject({ url: '/api/v1/families', remoteAddress: ip });
    const statuses = await hammer(100, anonymous);
    expect(new Set(statuses)).toEqual(new Set([200]));
    const refused = await anonymous();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^text\/plain/);
    expect(refused.body).toBe('Too Many Requests');
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-limit']).toBe('100');
    // Failed authentication counts against the same IP.
    const badKey = await t.app.inject({
      url: '/api/v1/families',
      remoteAddress: ip,
      headers: bearer(`svc_test_${'q'.repeat(40)}`),
    });
    expect(badKey.statusCode).toBe(429);
    // Another IP is unaffected.
    expect(
      (await t.app.inject({ url: '/api/v1/families', remoteAddress: '203.0.113.8' })).statusCode,
    ).toBe(200);
    t.clock.advance(60_000);
  });

  it('puts the counters on errors too, and none on unmetered routes', async () => {
    const key = await mintKey(t.app, owner, orgId);
    const notFound = await t.app.inject({
      url: '/api/v1/developers/orgs/nope',
      headers: owner.auth,
    });
    expect(notFound.statusCode).toBe(400);
    expect(notFound.headers['x-ratelimit-limit']).toBe('100');
    const unknownRoute = await t.app.inject({ url: '/api/v1/nothing-here' });
    expect(unknownRoute.headers['x-ratelimit-remaining']).toBeDefined();
    for (const url of ['/health', '/openapi.json', '/docs/', '/.well-known/haven/dev-jwks.json']) {
      const res = await t.app.inject({ url, headers: bearer(key.key) });
      expect(res.headers['x-ratelimit-limit'], url).toBeUndefined();
      expect(res.headers['x-ratelimit-remaining'], url).toBeUndefined();
    }
  });

  it('gives an org raised to pro 1000 a minute', async () => {
    // What `npm run admin -- set-tier` does, on the same database.
    const deps = { db: t.database.handle.db, clock: t.clock };
    await createOrgsService({
      ...deps,
      users: createUsersService(deps),
      writes: createAuditedWrites(deps),
    }).setTier(orgId, 'pro');
    t.clock.advance(60_000); // past the 5 s limit cache and the previous window
    const key = await mintKey(t.app, owner, orgId);
    const call = () =>
      t.app.inject({ url: '/api/v1/developer/platforms', headers: bearer(key.key) });
    const statuses = await hammer(1000, call);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await call();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-ratelimit-limit']).toBe('1000');
  });
});

describe('client IP for the IP bucket', () => {
  const exhaust = async (t: TestApp, forwardedFor: string) => {
    const call = () =>
      t.app.inject({
        url: '/api/v1/platforms',
        remoteAddress: '10.9.9.9',
        headers: { 'x-forwarded-for': forwardedFor },
      });
    await hammer(100, call);
    return call;
  };

  it('ignores X-Forwarded-For unless TRUST_PROXY is set', async () => {
    const t = await buildTestApp();
    try {
      await exhaust(t, '198.51.100.1');
      // A different forwarded address does not help: the socket address is the client.
      const other = await t.app.inject({
        url: '/api/v1/platforms',
        remoteAddress: '10.9.9.9',
        headers: { 'x-forwarded-for': '198.51.100.2' },
      });
      expect(other.statusCode).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('takes the client from X-Forwarded-For behind a trusted proxy', async () => {
    const t = await buildTestApp({ env: { TRUST_PROXY: 'true' } });
    try {
      const first = await exhaust(t, '198.51.100.1');
      expect((await first()).statusCode).toBe(429);
      const other = await t.app.inject({
        url: '/api/v1/platforms',
        remoteAddress: '10.9.9.9',
        headers: { 'x-forwarded-for': '198.51.100.2' },
      });
      expect(other.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
