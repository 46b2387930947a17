// Events commit with the change that causes them (docs/decisions.md "Events commit with their
// change"). The step after the change (storing its webhook messages) is made to fail in the
// database, as a process killed between the change's commit and its events would never take
// it: the change must then not be committed either, and once the step works again every
// committed change has its event, delivered once.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { injectFailure } from '../../../test/injected-failure.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';

const who = { 'x-sandbox-session': 'events-commit-with-change' };

describe('events commit with their change', () => {
  let t: TestApp;
  const receiver = new WebhookReceiver();
  let familyId: string;
  let childId: string;

  async function call(method: 'GET' | 'POST', url: string, payload?: object) {
    const res = await t.app.inject({ method, url, headers: who, payload });
    return { status: res.statusCode, body: res.statusCode === 204 ? undefined : res.json() };
  }

  /** Makes storing a webhook message of `eventPattern` (SQL LIKE) fail until undone. */
  const failStoringMessages = (name: string, eventPattern: string) =>
    injectFailure(t.database.handle.db, {
      name,
      on: 'insert',
      table: 'webhook_deliveries',
      when: `new.event like '${eventPattern}'`,
    });

  const messagesOf = (type: string) =>
    receiver.received
      .map((request) => ({
        id: request.headers['webhook-id'],
        message: JSON.parse(request.body) as { type: string; data: Record<string, unknown> },
      }))
      .filter(({ message }) => message.type === type);

  beforeAll(async () => {
    await receiver.start();
    t = await buildTestApp({
      clock: new TestClock(new Date()),
      tuning: { jobPollingIntervalSeconds: 0.5 },
    });
    const setup = await call('POST', '/api/v1/setup/quick', {
      child_name: 'Ines',
      birth_date: '2014-05-06',
    });
    expect(setup.status).toBe(201);
    familyId = setup.body.family.id;
    childId = setup.body.child.id;
    const connected = await call('POST', `/api/v1/families/${familyId}/connections`, {
      platform_id: 'android',
    });
    expect(connected.status).toBe(201);
    const webhook = await call('POST', '/api/v1/webhooks', {
      family_id: familyId,
      url: receiver.url,
      events: ['*'],
    });
    expect(webhook.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('an API write whose event cannot be stored is not committed; once it can, one event', async () => {
    const restore = await failStoringMessages('probe_fail_child_messages', 'child.created');
    try {
      const failed = await call('POST', `/api/v1/families/${familyId}/children`, {
        name: 'Never',
        birth_date: '2016-01-01',
      });
      expect(failed.status).toBe(500);
    } finally {
      await restore();
    }
    const children = await call('GET', `/api/v1/families/${familyId}/children`);
    expect(children.body.map((child: { name: string }) => child.name)).toEqual(['Ines']);

    const created = await call('POST', `/api/v1/families/${familyId}/children`, {
      name: 'Later',
      birth_date: '2016-01-01',
    });
    expect(created.status).toBe(201);
    await eventually(async () => messagesOf('child.created').length >= 1, 'child.created');
    expect(messagesOf('child.created').map(({ message }) => message.data.id)).toEqual([
      created.body.id,
    ]);
  });

  it('a job whose event cannot be stored does not finish; it is run again and has its event once', async () => {
    const db = t.database.handle.db;
    const restore = await failStoringMessages('probe_fail_job_messages', 'enforcement.%');
    let jobId: string;
    try {
      const queued = await call('POST', `/api/v1/children/${childId}/enforce`, {});
      expect(queued.status).toBe(202);
      jobId = queued.body.id;
      // The run reached its end and could not finish: the job is still running, unfinished.
      await eventually(async () => {
        const row = await db
          .selectFrom('enforcement_jobs')
          .select(['status', 'started_at'])
          .where('id', '=', jobId)
          .executeTakeFirstOrThrow();
        return row.started_at !== null;
      }, 'the job to be run once');
      await eventually(async () => {
        const failedRuns = await sql<{ n: number }>`
          select count(*)::int as n from pgboss.job
          where name = 'enforcement' and data->>'job_id' = ${jobId} and retry_count > 0`.execute(
          db,
        );
        return (failedRuns.rows[0]?.n ?? 0) > 0;
      }, 'the failed run to be handed back for a retry');
      const job = await call('GET', `/api/v1/enforcement/jobs/${jobId}`);
      expect(['pending', 'running']).toContain(job.body.status);
      expect(messagesOf('enforcement.completed')).toEqual([]);
    } finally {
      await restore();
    }
    await eventually(
      async () => messagesOf('enforcement.completed').length >= 1,
      'enforcement.completed after the retry',
      60_000,
    );
    const finished = await call('GET', `/api/v1/enforcement/jobs/${jobId}`);
    expect(finished.body.status).toBe('completed');
    const delivered = messagesOf('enforcement.completed');
    expect(delivered.map(({ message }) => message.data.id)).toEqual([jobId]);
  });
});
