// A job held by a process that is killed (SIGKILL) mid-run is taken up again within a minute of
// the kill (src/jobs/reaper.ts), not when pg-boss's expiry would hand it out. The held job is a
// webhook delivery to an endpoint that does not answer its first request: on PostgreSQL, the
// API running it is killed and a separate `npm run worker` takes the delivery up; on embedded
// storage, the server restarted on the same DATA_DIR does.
import { rmSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/connect.js';
import { isInstanceAliveSql } from '../src/jobs/liveness.js';
import { createTestDatabase, newDataDir } from './database.js';
import { killHard, runScript, sandboxCaller, startServer, waitForLine } from './server-process.js';
import { eventually } from './tcp-proxy.js';
import { WebhookReceiver } from './webhook-receiver.js';

const PROCESS_TIMEOUT_MS = 180_000;
/** The requirement: a dead process's job is taken up again within a minute of its death. */
const PICK_UP_MS = 60_000;
const call = sandboxCaller('job-liveness');

/** A family with a webhook to the receiver, and a test message sent to it: the webhook id. */
async function sendTestMessage(url: string, receiverUrl: string): Promise<string> {
  const family = await call(url, 'POST', '/api/v1/families', { name: 'Liveness' });
  expect(family.status, JSON.stringify(family.body)).toBe(201);
  const webhook = await call(url, 'POST', '/api/v1/webhooks', {
    family_id: family.body.id,
    url: receiverUrl,
    events: ['test'],
  });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  const sent = await call(url, 'POST', `/api/v1/webhooks/${webhook.body.id}/test`);
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return webhook.body.id as string;
}

async function deliveriesOf(url: string, webhookId: string) {
  const list = await call(url, 'GET', `/api/v1/webhooks/${webhookId}/deliveries`);
  expect(list.status).toBe(200);
  return list.body as unknown as Array<{ status: string; attempt: number; message_id: string }>;
}

describe('a job held by a killed process', () => {
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
  });

  /** The first request is held unanswered (the process is killed meanwhile); later ones 204. */
  function hangFirst(): void {
    receiver.received.length = 0;
    receiver.answer = (_request, index) => (index === 0 ? 'hang' : { status: 204 });
  }

  /** Waits for the retried request and its recorded success: ms from the kill to the retry. */
  async function pickedUp(readerUrl: string, webhookId: string, killedAt: number) {
    const deadline = killedAt + PICK_UP_MS - Date.now();
    await eventually(
      async () => receiver.received.length >= 2,
      'the delivery to be sent again',
      deadline,
    );
    const pickUpMs = Date.now() - killedAt;
    let deliveries: Awaited<ReturnType<typeof deliveriesOf>> = [];
    await eventually(async () => {
      deliveries = await deliveriesOf(readerUrl, webhookId);
      return deliveries[0]?.status === 'succeeded';
    }, 'the delivery to be recorded as succeeded');
    // The same attempt, run again (not a new attempt after a recorded failure), sent once more.
    expect(deliveries).toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded' })]);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]?.headers['webhook-id']).toBe(
      receiver.received[0]?.headers['webhook-id'],
    );
    process.stdout.write(`[job liveness] taken up ${pickUpMs} ms after the kill\n`);
    return pickUpMs;
  }

  // Two processes on one database: only PostgreSQL lets another process in while the first
  // runs (embedded storage has one owner; its case is the restart below).
  it.skipIf(!process.env.DATABASE_URL)(
    'PostgreSQL: a delivery held by a killed API is sent again by a worker within 60 s',
    async () => {
      hangFirst();
      const database = await createTestDatabase();
      const url = database.url as string;
      try {
        const api = await startServer({ DATABASE_URL: url, WORKERS: 'inline' });
        const webhookId = await sendTestMessage(api.url, receiver.url);
        await eventually(async () => receiver.received.length === 1, 'the delivery to be held');
        await killHard(api);
        const killedAt = Date.now();

        const reader = await startServer({ DATABASE_URL: url, WORKERS: 'off' });
        const worker = runScript('worker', { DATABASE_URL: url, LOG_LEVEL: 'info' });
        try {
          await waitForLine(worker, /Haven worker running/);
          expect(await pickedUp(reader.url, webhookId, killedAt)).toBeLessThan(PICK_UP_MS);
          // A clean stop deletes the process's heartbeat; the killed API's stays, stale.
          for (const running of [worker, reader]) {
            running.child.kill('SIGTERM');
            expect(await running.exited).toBe(0);
          }
          expect(await heartbeats(database.handle.db)).toEqual([{ alive: false }]);
        } finally {
          await killHard(reader);
          worker.child.kill('SIGKILL');
        }
      } finally {
        await database.drop();
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'embedded storage: a delivery held by a killed server is sent again after the restart within 60 s',
    async () => {
      hangFirst();
      const dataDir = newDataDir('liveness');
      try {
        const first = await startServer({ DATA_DIR: dataDir });
        const webhookId = await sendTestMessage(first.url, receiver.url);
        await eventually(async () => receiver.received.length === 1, 'the delivery to be held');
        await killHard(first);
        const killedAt = Date.now();

        const second = await startServer({ DATA_DIR: dataDir });
        try {
          expect(await pickedUp(second.url, webhookId, killedAt)).toBeLessThan(PICK_UP_MS);
        } finally {
          await killHard(second);
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});

/** Every heartbeat row, and whether it tells of a live process. */
async function heartbeats(db: Db) {
  const rows = await sql<{ alive: boolean }>`
    select ${isInstanceAliveSql(sql.ref('instance_id'))} as alive
    from instance_heartbeats`.execute(db);
  return rows.rows;
}
