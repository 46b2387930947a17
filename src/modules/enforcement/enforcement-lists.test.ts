// CONTRACT.md §8: a child's enforcement jobs, the caller's history across families (limit
// clamp, offset, stable newest-first order), and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { eventually } from '../../../test/tcp-proxy.js';

type Headers = Record<string, string>;
interface Job {
  id: string;
  child_id: string;
  status: string;
  created_at: string;
}

let t: TestApp;
const alice: Headers = { 'x-sandbox-session': 'lists-alice' };
const mallory: Headers = { 'x-sandbox-session': 'lists-mallory' };

async function quickSetup(who: Headers) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/setup/quick',
    headers: who,
    payload: { child_name: 'Ada', birth_date: '2014-02-02' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { familyId: res.json().family.id as string, childId: res.json().child.id as string };
}

async function enforce(who: Headers, childId: string): Promise<Job> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/children/${childId}/enforce`,
    headers: who,
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

const get = (url: string, who: Headers = alice) => t.app.inject({ url, headers: who });
const ids = (jobs: Job[]) => jobs.map((job) => job.id);

/** Newest first, ties broken by id (descending), as the contract's lists promise. */
function newestFirst(jobs: Job[]): Job[] {
  return [...jobs].sort((a, b) =>
    a.created_at === b.created_at
      ? b.id.localeCompare(a.id)
      : b.created_at.localeCompare(a.created_at),
  );
}

async function jobRowCount(): Promise<number> {
  const row = await t.database.handle.db
    .selectFrom('enforcement_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('enforcement job lists', () => {
  let first: Awaited<ReturnType<typeof quickSetup>>;
  let second: Awaited<ReturnType<typeof quickSetup>>;
  const made: Job[] = [];

  beforeAll(async () => {
    first = await quickSetup(alice);
    second = await quickSetup(alice);
    for (let i = 0; i < 3; i += 1) {
      t.clock.advance(1_000);
      made.push(await enforce(alice, first.childId));
      made.push(await enforce(alice, second.childId));
    }
    // Two more in the same millisecond: their order is by id.
    made.push(await enforce(alice, first.childId));
    made.push(await enforce(alice, first.childId));
    await eventually(async () => {
      const all: Job[] = (await get('/api/v1/enforce/history?limit=100')).json();
      return all.length === made.length && all.every((job) => job.status === 'completed');
    }, 'every job to complete');
  });

  it("lists a child's jobs newest first, with limit", async () => {
    const ofFirst = newestFirst(made.filter((job) => job.child_id === first.childId));
    const all = await get(`/api/v1/children/${first.childId}/enforcement/jobs`);
    expect(all.statusCode).toBe(200);
    expect(ids(all.json())).toEqual(ids(ofFirst));
    const two = await get(`/api/v1/children/${first.childId}/enforcement/jobs?limit=2`);
    expect(ids(two.json())).toEqual(ids(ofFirst).slice(0, 2));
  });

  it('refuses a limit that is not a positive integer', async () => {
    for (const limit of ['0', '-1', '1.5', 'abc']) {
      for (const path of [
        `/api/v1/children/${first.childId}/enforcement/jobs`,
        '/api/v1/enforce/history',
      ]) {
        const res = await get(`${path}?limit=${limit}`);
        expect(res.statusCode, `${path} limit=${limit}`).toBe(400);
        expect(res.json().message).toBe('limit must be a positive integer');
      }
    }
    for (const offset of ['-1', 'abc', '0.5']) {
      const res = await get(`/api/v1/enforce/history?offset=${offset}`);
      expect(res.statusCode, `offset=${offset}`).toBe(400);
    }
  });

  it('pages the history across families with limit and offset', async () => {
    const expected = ids(newestFirst(made));
    const all = await get('/api/v1/enforce/history');
    expect(ids(all.json())).toEqual(expected);
    const pages: string[] = [];
    for (let offset = 0; offset < expected.length; offset += 3) {
      const page = await get(`/api/v1/enforce/history?limit=3&offset=${offset}`);
      pages.push(...ids(page.json()));
    }
    expect(pages).toEqual(expected);
    const beyond = await get('/api/v1/enforce/history?offset=1000');
    expect(beyond.json()).toEqual([]);
  });

  it('clamps a limit above 100 to 100, on both lists', async () => {
    const busy = await quickSetup(alice);
    for (let i = 0; i < 101; i += 1) {
      // A fresh rate-limit minute for each request: this test is about the lists.
      t.clock.advance(61_000);
      await enforce(alice, busy.childId);
    }
    t.clock.advance(61_000);
    const child = await get(`/api/v1/children/${busy.childId}/enforcement/jobs?limit=1000`);
    expect(child.statusCode).toBe(200);
    expect(child.json()).toHaveLength(100);
    const history = await get('/api/v1/enforce/history?limit=500');
    expect(history.json()).toHaveLength(100);
    await eventually(async () => {
      const left = await t.database.handle.db
        .selectFrom('enforcement_jobs')
        .select('id')
        .where('status', 'in', ['pending', 'running'])
        .execute();
      return left.length === 0;
    }, 'the burst of jobs to be worked off');
  });

  it("keeps another caller out: another tenant's jobs are not found, its children not enforceable", async () => {
    t.clock.advance(61_000);
    const job = made[0] as Job;
    const before = await jobRowCount();
    const read = await get(`/api/v1/enforcement/jobs/${job.id}`, mallory);
    expect(read.statusCode).toBe(404);
    expect(read.json().message).toBe('enforcement job not found');
    const list = await get(`/api/v1/children/${first.childId}/enforcement/jobs`, mallory);
    expect(list.statusCode).toBe(403);
    expect(list.json().message).toBe('not a member of this family');
    const post = await t.app.inject({
      method: 'POST',
      url: `/api/v1/children/${first.childId}/enforce`,
      headers: mallory,
    });
    expect(post.statusCode).toBe(403);
    const armed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sandbox/platforms/nextdns/fail',
      headers: mallory,
      payload: { family_id: first.familyId },
    });
    expect(armed.statusCode).toBe(403);
    const cleared = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/sandbox/platforms/nextdns/fail?family_id=${first.familyId}`,
      headers: mallory,
    });
    expect(cleared.statusCode).toBe(403);
    const history = await get('/api/v1/enforce/history', mallory);
    expect(history.json()).toEqual([]);
    expect(await jobRowCount()).toBe(before);
    const failures = await t.database.handle.db
      .selectFrom('sandbox_platform_failures')
      .selectAll()
      .execute();
    expect(failures).toEqual([]);
  });
});
