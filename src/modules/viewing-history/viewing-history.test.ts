import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import {
  deviceAgent,
  type Headers,
  quickSetup,
  registerDevice,
  sandbox,
} from '../../../test/devices.js';
import { CSM_CATALOG } from '../csm/catalog.js';

const parent = sandbox('viewing-parent');

interface Entry {
  id: string;
  child_id: string;
  device_id: string | null;
  platform: string;
  title: string;
  series_title: string | null;
  watched_at: string;
  created_at: string;
  rating: null | { system: string; slug: string; age_rating: string; title: string };
}

const ENTRY_FIELDS = [
  'id',
  'child_id',
  'device_id',
  'platform',
  'title',
  'series_title',
  'watched_at',
  'created_at',
  'rating',
].sort();

describe('viewing history (CONTRACT.md §8 viewing-history row)', () => {
  let t: TestApp;
  let childId: string;
  let deviceId: string;
  let key: string;

  const watch = async (payload: Record<string, unknown>) => {
    // A device is metered like anyone: a second per report keeps the window from filling.
    t.clock.advance(1_000);
    const res = await deviceAgent(t).report(key, {
      report_type: 'viewing',
      payload,
      reported_at: t.clock.now().toISOString(),
    });
    expect(res.statusCode, res.body).toBe(202);
  };
  const history = (query = '', who: Headers = parent, child = childId) =>
    t.app.inject({ url: `/api/v1/viewing-history/${child}${query}`, headers: who });

  beforeAll(async () => {
    t = await buildTestApp();
    childId = (await quickSetup(t, parent, 'Ada')).childId;
    const registered = await registerDevice(t, parent, childId, { device_name: 'Living room TV' });
    deviceId = registered.device.id;
    key = registered.device_key;
  });
  afterAll(() => t.close());

  it('a viewing report becomes one entry, rated from the CSM catalog when the title is known', async () => {
    const known = CSM_CATALOG.find((review) => review.media_type === 'movie');
    const series = CSM_CATALOG.find((review) => review.media_type === 'tv');
    if (!known || !series) {
      throw new Error('the catalog has movies and series');
    }
    await watch({
      platform: 'netflix',
      title: `  ${known.title.toUpperCase()} `,
      watched_at: '2026-01-10T20:00:00Z',
    });
    await watch({
      platform: 'youtube',
      title: 'Totally Unknown Clip 123',
      watched_at: '2026-01-11T20:00:00Z',
    });
    await watch({
      platform: 'disney_plus',
      title: 'Episode 4: The Storm',
      series_title: series.title,
      watched_at: '2026-01-12T20:00:00+02:00',
    });

    const res = await history();
    expect(res.statusCode).toBe(200);
    const entries = res.json() as Entry[];
    expect(entries).toHaveLength(3);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(ENTRY_FIELDS);
      expect(entry).toMatchObject({ child_id: childId, device_id: deviceId });
    }
    const [episode, unknown, movie] = entries;
    expect(episode).toMatchObject({
      platform: 'disney_plus',
      title: 'Episode 4: The Storm',
      series_title: series.title,
      watched_at: '2026-01-12T18:00:00.000Z',
      rating: { system: 'csm', slug: series.slug, age_rating: series.age_rating },
    });
    expect(unknown).toMatchObject({
      title: 'Totally Unknown Clip 123',
      series_title: null,
      rating: null,
    });
    expect(movie).toMatchObject({
      title: known.title.toUpperCase(),
      rating: {
        system: 'csm',
        slug: known.slug,
        title: known.title,
        age_rating: known.age_rating,
        age_range_min: known.age_range_min,
        quality_stars: known.quality_stars,
        is_family_friendly: known.is_family_friendly,
        media_type: 'movie',
      },
    });
  });

  it('pages newest first with limit (default 50, over 100 clamped) and offset', async () => {
    // 105 more entries, one minute apart, all older than the three above.
    for (let i = 0; i < 105; i++) {
      const at = new Date(Date.parse('2025-12-01T00:00:00Z') + i * 60_000).toISOString();
      await watch({ platform: 'netflix', title: `Clip ${i}`, watched_at: at });
    }
    const all = [] as Entry[];
    for (const offset of [0, 100]) {
      const page = await history(`?limit=100&offset=${offset}`);
      expect(page.statusCode).toBe(200);
      all.push(...(page.json() as Entry[]));
    }
    expect(all).toHaveLength(108);
    expect(new Set(all.map((e) => e.id)).size).toBe(108);
    const times = all.map((e) => Date.parse(e.watched_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    expect((await history()).json()).toHaveLength(50);
    expect((await history('?limit=1000')).json()).toHaveLength(100);
    const tail = (await history('?limit=10&offset=100')).json() as Entry[];
    expect(tail.map((e) => e.id)).toEqual(all.slice(100, 108).map((e) => e.id));
    expect((await history('?offset=5000')).json()).toEqual([]);
    expect((await history('?offset=1e99')).json()).toEqual([]);
    expect((await history('?limit=1e99')).json()).toHaveLength(100);
    expect((await history('?limit=2&offset=1')).json().map((e: Entry) => e.id)).toEqual(
      all.slice(1, 3).map((e) => e.id),
    );

    for (const [query, message] of [
      ['?limit=0', 'limit must be >= 1'],
      ['?limit=-1', 'limit must be >= 1'],
      ['?limit=1.5', 'limit must be an integer'],
      ['?limit=abc', 'limit must be an integer'],
      ['?offset=-1', 'offset must be >= 0'],
      ['?offset=x', 'offset must be an integer'],
    ]) {
      const res = await history(query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toEqual({ error: 'Bad Request', message, code: 400 });
    }
  });

  it('is closed to other tenants, 400 on a malformed id, 404 on an unknown child', async () => {
    const stranger = await history('', sandbox('viewing-stranger'));
    expect([403, 404]).toContain(stranger.statusCode);
    expect(stranger.json().code).toBe(stranger.statusCode);
    const bad = await history('', parent, 'not-a-uuid');
    expect(bad.json()).toEqual({ error: 'Bad Request', message: 'invalid child ID', code: 400 });
    const unknown = await history('', parent, '00000000-0000-4000-8000-000000000000');
    expect(unknown.json()).toEqual({ error: 'Not Found', message: 'child not found', code: 404 });
  });

  it('keeps the history when the device is revoked', async () => {
    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/devices/${deviceId}`,
      headers: parent,
    });
    expect(revoke.statusCode).toBe(204);
    expect((await history('?limit=1')).json()[0].device_id).toBe(deviceId);
  });
});
