// `haven_age_changes_total` (CONTRACT.md §13): one per child whose age in force a run of this
// process changed (a birthday, coming of age), counted once its batch committed; nothing for a
// day without a birthday. Driven by a sandbox test clock's advances, each one run of the
// `age-changes` queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { longSession, type Session } from '../../../test/identity.js';
import { scrape } from '../../../test/metric-samples.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { QUEUES } from '../../jobs/queues.js';

describe('age changes, counted', () => {
  let t: TestApp;
  let owner: Session;
  beforeAll(async () => {
    t = await buildTestApp({ tuning: { jobPollingIntervalSeconds: 0.5 } });
    owner = await longSession(t);
  });
  afterAll(() => t.close());

  async function call(method: 'GET' | 'POST', url: string, payload?: unknown) {
    const res = await t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: owner.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  }

  const changes = async () => (await scrape(t.app)).value('haven_age_changes_total');
  const runs = async () =>
    (await scrape(t.app)).value('haven_jobs_total', {
      queue: QUEUES.ageChanges,
      outcome: 'completed',
    });

  /** Advances the clock; answers once its run is over and counted. */
  async function advance(clockId: string, frozenTime: string): Promise<void> {
    const before = await runs();
    await call('POST', `/sandbox/test-clocks/${clockId}/advance`, { frozen_time: frozenTime });
    await eventually(async () => (await runs()) === before + 1, 'the advance’s run counted');
    const clock = await call('GET', `/sandbox/test-clocks/${clockId}`);
    expect(clock.status).toBe('ready');
  }

  it('counts each child whose age changed, coming of age included, and nothing on a day without a birthday', async () => {
    const clock = await call('POST', '/sandbox/test-clocks', {
      frozen_time: '2026-03-01T09:00:00Z',
      name: 'Counted year',
    });
    const setup = await call('POST', '/setup/quick', {
      child_name: 'Ada',
      birth_date: '2014-03-10',
      test_clock_id: clock.id,
    });
    // Turns 18 on 5 March: comes of age.
    await call('POST', `/families/${setup.family.id}/children`, {
      name: 'Bo',
      birth_date: '2008-03-05',
    });
    // Turns 13 in June: not within the advances below.
    await call('POST', `/families/${setup.family.id}/children`, {
      name: 'Cy',
      birth_date: '2013-06-20',
    });

    const start = await changes();
    await advance(clock.id, '2026-03-04T09:00:00Z');
    expect(await changes()).toBe(start);

    await advance(clock.id, '2026-03-12T09:00:00Z');
    expect(await changes()).toBe(start + 2);
    expect(await call('GET', `/children/${setup.child.id}`)).toMatchObject({ age: 12 });

    await advance(clock.id, '2026-03-13T09:00:00Z');
    expect(await changes()).toBe(start + 2);
  });
});
