import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';

describe('GET /api/v1/rules/categories', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('serves the 123-entry registry, open', async () => {
    const res = await t.app.inject({ url: '/api/v1/rules/categories' });
    expect(res.statusCode).toBe(200);
    const registry = res.json() as Array<{ category: string; engagement: boolean }>;
    expect(registry).toHaveLength(123);
    const engagement = registry.filter((r) => r.engagement).map((r) => r.category);
    expect(engagement).toEqual(
      expect.arrayContaining(['infinite_scroll_block', 'addictive_pattern_block']),
    );
    const key = await t.app.inject({ url: '/api/v1/developer/rules/categories' });
    expect(key.statusCode).toBe(403);
  });
});
