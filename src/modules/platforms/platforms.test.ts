import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { describeKeyAuthContract } from '../../../test/key-auth-contract.js';
import { LIVE_PARTNERS } from '../partners/live-partners.js';
import { CAPABILITIES } from './catalog.js';

describe('platform catalog', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('lists the 22 platforms, open and metered in the sandbox', async () => {
    const res = await t.app.inject({ url: '/api/v1/platforms' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('100');
    const platforms = res.json() as Array<Record<string, unknown>>;
    expect(platforms).toHaveLength(22);
    const byCategory = (c: string) => platforms.filter((p) => p.category === c).length;
    expect([
      byCategory('device'),
      byCategory('dns'),
      byCategory('gaming'),
      byCategory('streaming'),
    ]).toEqual([6, 3, 3, 10]);
    for (const p of platforms) {
      expect(p.id).toBe(p.platform_id);
      expect(['compliant', 'provisional', 'pending']).toContain(p.tier);
      expect(['api_key', 'oauth2', 'manual']).toContain(p.auth_type);
      expect((p.capabilities as string[]).length).toBeGreaterThan(0);
      for (const capability of p.capabilities as string[]) {
        expect(CAPABILITIES).toContain(capability);
      }
    }
  });

  it('calls a platform compliant exactly when a live adapter for it exists', async () => {
    const platforms = (await t.app.inject({ url: '/api/v1/platforms' })).json() as Array<{
      platform_id: string;
      tier: string;
    }>;
    const compliant = platforms.filter((p) => p.tier === 'compliant').map((p) => p.platform_id);
    expect(compliant.sort()).toEqual(LIVE_PARTNERS.map((p) => p.platformId).sort());
    expect(compliant).toEqual(expect.arrayContaining(['nextdns', 'controld']));
    expect(platforms.find((p) => p.platform_id === 'cleanbrowsing')?.tier).toBe('provisional');
  });

  it('serves one platform, and 404 for an unknown id', async () => {
    const nextdns = await t.app.inject({ url: '/api/v1/platforms/nextdns' });
    expect(nextdns.json()).toMatchObject({
      platform_id: 'nextdns',
      category: 'dns',
      tier: 'compliant',
      auth_type: 'api_key',
    });
    const unknown = await t.app.inject({ url: '/api/v1/platforms/myspace' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('platform not found');
  });
});

describeKeyAuthContract({
  name: 'GET /api/v1/developer/platforms',
  scope: 'read:platforms',
  okStatus: 200,
  request: () => ({ method: 'GET', url: '/api/v1/developer/platforms' }),
});

describeKeyAuthContract({
  name: 'GET /api/v1/developer/platforms/{platformID}',
  scope: 'read:platforms',
  okStatus: 200,
  request: () => ({ method: 'GET', url: '/api/v1/developer/platforms/apple' }),
});
