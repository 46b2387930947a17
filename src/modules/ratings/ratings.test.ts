import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { describeKeyAuthContract } from '../../../test/key-auth-contract.js';
import { productionEnv } from '../../../test/production.js';

describe('ratings catalog', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      env: productionEnv(),
    });
  });
  afterAll(async () => t.close());

  it('lists the five systems, public even in production', async () => {
    const res = await t.app.inject({ url: '/api/v1/ratings/systems' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      {
        id: 'csm',
        name: 'Common Sense Media',
        country: 'US',
        media_type: 'general',
        description: 'Common Sense Media age-based ratings',
      },
      {
        id: 'esrb',
        name: 'ESRB',
        country: 'US',
        media_type: 'game',
        description: 'Entertainment Software Rating Board',
      },
      {
        id: 'mpaa',
        name: 'MPAA',
        country: 'US',
        media_type: 'movie',
        description: 'Motion Picture Association film rating system',
      },
      {
        id: 'pegi',
        name: 'PEGI',
        country: 'EU',
        media_type: 'game',
        description: 'Pan European Game Information',
      },
      {
        id: 'tvpg',
        name: 'TV Parental Guidelines',
        country: 'US',
        media_type: 'tv',
        description: 'US television content rating system',
      },
    ]);
  });

  it('serves one system with its ratings, and 404 for an unknown one', async () => {
    const mpaa = (await t.app.inject({ url: '/api/v1/ratings/systems/mpaa' })).json();
    expect(mpaa.ratings.map((r: { code: string }) => r.code)).toEqual([
      'G',
      'PG',
      'PG-13',
      'R',
      'NC-17',
    ]);
    expect(mpaa.ratings[2]).toEqual({ code: 'PG-13', min_age: 13 });
    const unknown = await t.app.inject({ url: '/api/v1/ratings/systems/bbfc' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('rating system not found');
  });

  it('gives the band and maximum ratings for an age', async () => {
    const byAge = async (age: number | string) =>
      t.app.inject({ url: `/api/v1/ratings/by-age?age=${age}` });
    expect((await byAge(12)).json()).toEqual({
      age: 12,
      age_group: 'preteen',
      max_ratings: { mpaa: 'PG', tvpg: 'TV-PG', esrb: 'E10+', pegi: '7', csm: '10+' },
    });
    expect((await byAge(17)).json().max_ratings).toEqual({
      mpaa: 'R',
      tvpg: 'TV-MA',
      esrb: 'M',
      pegi: '16',
      csm: '17+',
    });
    expect((await byAge(0)).json().age_group).toBe('toddler');
    expect((await byAge(99)).json().max_ratings.esrb).toBe('AO');
    for (const bad of ['-1', '100', 'ten', '1.5', '']) {
      const res = await byAge(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe('age must be between 0 and 99');
    }
    const missing = await t.app.inject({ url: '/api/v1/ratings/by-age' });
    expect(missing.json().message).toBe('age is required');
  });
});

describeKeyAuthContract({
  name: 'GET /api/v1/developer/ratings/systems',
  scope: 'read:ratings',
  okStatus: 200,
  request: () => ({ method: 'GET', url: '/api/v1/developer/ratings/systems' }),
});

describeKeyAuthContract({
  name: 'GET /api/v1/developer/ratings/by-age',
  scope: 'read:ratings',
  okStatus: 200,
  request: () => ({ method: 'GET', url: '/api/v1/developer/ratings/by-age?age=9' }),
});
