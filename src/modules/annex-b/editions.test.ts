// GET /api/v1/annex-b/editions/{n} (CONTRACT.md §9), with editions frozen in process by the
// same service the operator command uses.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase } from '../../../test/database.js';
import { RULE_REGISTRY } from '../rules/registry.js';
import { type AnnexBService, createAnnexBService } from './service.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

describe('GET /api/v1/annex-b/editions/{n}', () => {
  let t: TestApp;
  let steward: AnnexBService;
  const editionOne: { body?: string } = {};

  beforeAll(async () => {
    t = await buildTestApp();
    // A second service on the same database, as `npm run annex-b -- freeze` would be: the
    // app's own instance learns of the edition only through the database.
    steward = createAnnexBService({ db: t.database.handle.db, clock: t.clock });
  });
  afterAll(() => t.close());

  const get = (n: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url: `/api/v1/annex-b/editions/${n}`, headers });

  it('answers 404 `edition not frozen` for every number before the first freeze', async () => {
    for (const n of ['1', '2', '999', '2147483648', '9999999999']) {
      const res = await get(n);
      expect(res.statusCode, n).toBe(404);
      expect(res.json()).toEqual({ error: 'Not Found', message: 'edition not frozen', code: 404 });
      // It may be frozen any moment: nothing may keep this answer.
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it('refuses a number that is not a positive integer with 400 naming n', async () => {
    for (const n of ['0', '-1', 'abc', '1.5', '01', '1e3', '+1', '%201', '12345678901']) {
      const res = await get(n);
      expect(res.statusCode, n).toBe(400);
      expect(res.json(), n).toEqual({
        error: 'Bad Request',
        message: 'n must be a positive integer',
        code: 400,
      });
    }
  });

  it('is public and unmetered: no credential needed, no rate-limit headers', async () => {
    const res = await get('1', { authorization: 'Bearer not-a-token' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
  });

  it('serves edition 1 once frozen: canonical bytes, hash ETag, immutable caching', async () => {
    const frozen = await steward.freeze();
    expect(frozen.edition).toBe(1);

    const res = await get('1');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe(IMMUTABLE);
    expect(res.headers.etag).toBe(`"sha256:${sha256(res.body)}"`);
    expect(res.headers.etag).toBe(`"sha256:${frozen.sha256}"`);
    expect(res.body).toBe(canonicalize(JSON.parse(res.body)));

    const artifact = JSON.parse(res.body);
    expect(Object.keys(artifact).sort()).toEqual(['edition', 'frozen_at', 'rules']);
    expect(artifact.edition).toBe(1);
    expect(artifact.frozen_at).toBe(t.clock.now().toISOString());
    expect(artifact.rules).toHaveLength(123);
    expect(artifact.rules).toEqual(JSON.parse(JSON.stringify(RULE_REGISTRY)));
    editionOne.body = res.body;

    expect((await get('2')).statusCode).toBe(404);
  });

  it('answers a matching If-None-Match with an empty 304', async () => {
    const { etag } = (await get('1')).headers;
    for (const header of [String(etag), `W/${etag}`, `"sha256:${'0'.repeat(64)}", ${etag}`, '*']) {
      const res = await get('1', { 'if-none-match': header });
      expect(res.statusCode, header).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe(IMMUTABLE);
    }
    const other = await get('1', { 'if-none-match': `"sha256:${'0'.repeat(64)}"` });
    expect(other.statusCode).toBe(200);
    expect(other.body).toBe(editionOne.body);
    // No edition yet: nothing to match, even `*`.
    expect((await get('2', { 'if-none-match': '*' })).statusCode).toBe(404);
  });

  it('freezes edition 2 later; edition 1 stays byte for byte what it was', async () => {
    t.clock.advance(86_400_000);
    const frozen = await steward.freeze();
    expect(frozen.edition).toBe(2);

    const two = await get('2');
    expect(two.statusCode).toBe(200);
    expect(JSON.parse(two.body)).toMatchObject({
      edition: 2,
      frozen_at: t.clock.now().toISOString(),
    });
    expect(two.headers.etag).toBe(`"sha256:${sha256(two.body)}"`);

    const one = await get('1');
    expect(one.body).toBe(editionOne.body);
    expect(one.headers.etag).toBe(`"sha256:${sha256(String(editionOne.body))}"`);
    expect((await get('3')).statusCode).toBe(404);
    expect((await steward.list()).map((e) => e.edition)).toEqual([1, 2]);
  });

  it('refuses to change or delete a frozen edition in the database itself', async () => {
    const db = t.database.handle.db;
    await expect(
      sql`update annex_b_editions set artifact = '{}' where edition = 1`.execute(db),
    ).rejects.toThrow(/frozen/);
    await expect(sql`delete from annex_b_editions where edition = 1`.execute(db)).rejects.toThrow(
      /frozen/,
    );
  });

  it('serves an edition it has read from memory, without the database', async () => {
    // Truncate skips the row triggers: it stands in for "the database is not asked".
    await sql`truncate annex_b_editions`.execute(t.database.handle.db);
    const one = await get('1');
    expect(one.statusCode).toBe(200);
    expect(one.body).toBe(editionOne.body);
    expect((await get('3')).statusCode).toBe(404);
  });
});

describe('freezing concurrently', () => {
  it('numbers the editions 1, 2, 3 … with no duplicate and no gap', async () => {
    const database = await createTestDatabase();
    // On PostgreSQL a second pool, like a second process: the freezes really race there.
    const second = database.reopen?.();
    try {
      const clock = new TestClock();
      const pools = [database.handle.db, (second ?? database.handle).db];
      const frozen = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          createAnnexBService({ db: pools[i % 2] ?? database.handle.db, clock }).freeze(),
        ),
      );
      expect(frozen.map((f) => f.edition).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
      const listed = await createAnnexBService({ db: database.handle.db, clock }).list();
      expect(listed.map((e) => e.edition)).toEqual([1, 2, 3, 4, 5, 6]);
      // Same registry, different edition number: every artifact is its own.
      expect(new Set(listed.map((e) => e.sha256)).size).toBe(6);
    } finally {
      await second?.close();
      await database.drop();
    }
  });
});
