// CONTRACT.md §11.1 "a birthday is applied exactly once per child and age" through a crash:
// 3 000 children whose birthday is today (the real clock, as a deployment's processes read
// it) are stored by SQL, each in its own family with a webhook for `child.age_changed` and an
// active policy generated for the age before. A worker process runs the real clock's age run;
// once it has applied some of them, and before it has applied all, it is killed with
// SIGKILL (the child it had in hand rolls back with its connection). A second worker
// finishes the run. Then each child was applied once: its new age and next birthday stored,
// its policy one version up where generation differs between the two ages (else untouched),
// exactly one `child.age_changed` message stored for it, and none left due.
//
// The workers are test/age-run-worker.mjs, `npm run worker` with the run looking every 50 ms:
// the service's period (60 s) is a ServiceTuning knob, never read from the environment, and
// `npm run worker` would wait a minute before each process's first run.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ageOn } from '../src/modules/age/bands.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { rulesChangeAt, storeDueChildren, storeWebhooks } from './due-children.js';
import { killHard, type RunningScript, waitForLine } from './server-process.js';
import { WebhookReceiver } from './webhook-receiver.js';

const postgres = Boolean(process.env.DATABASE_URL);
const DUE = 3_000;
/** The ages turned today, in turn: 13 and 17 change the rules generated, 12 changes none. */
const AGES = [13, 12, 17, 11, 13, 8];
/** Killed once at least this many are applied (and fewer than all). */
const KILL_AFTER = 300;
const RUN_DEADLINE_MS = 240_000;
/** The runner's bound, for a hang only: the waits have their own deadline. */
const TEST_TIMEOUT_MS = 360_000;
const ROOT = new URL('..', import.meta.url).pathname;

function startWorker(databaseUrl: string): RunningScript {
  const child = spawn(process.execPath, ['test/age-run-worker.mjs'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      LOG_LEVEL: 'info',
      AGE_RUN_PERIOD_MS: '50',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk) => {
    output.stdout += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output.stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

describe.skipIf(!postgres)(
  postgres
    ? 'a worker killed with SIGKILL during a run of 3 000 birthdays'
    : 'the age run killed mid-run (skipped: needs PostgreSQL, DATABASE_URL)',
  () => {
    let database: TestDatabase | undefined;
    const workers: RunningScript[] = [];
    const receiver = new WebhookReceiver();
    let familyIds: string[] = [];
    const today = new Date().toISOString().slice(0, 10);

    beforeAll(async () => {
      await receiver.start();
      database = await createTestDatabase();
      ({ familyIds } = await storeDueChildren(database.url as string, {
        today,
        due: DUE,
        ages: AGES,
      }));
      // One webhook a family (the receiver answers 204).
      await storeWebhooks(database.handle.db, familyIds, receiver.url);
    }, 120_000);

    afterAll(async () => {
      await Promise.all(workers.map((worker) => killHard(worker)));
      await receiver.stop();
      await database?.drop();
    });

    /** How many of the children are applied (their next birthday is no longer today). */
    async function appliedCount(): Promise<number> {
      const row = await (database as TestDatabase).handle.db
        .selectFrom('children')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('family_id', 'in', familyIds)
        .where('next_age_change_on', '>', today)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    it(
      'applies every birthday exactly once across the kill',
      async () => {
        const db = (database as TestDatabase).handle.db;
        const url = (database as TestDatabase).url as string;
        expect(await appliedCount()).toBe(0);

        const first = startWorker(url);
        workers.push(first);
        await waitForLine(first, /Haven worker running/);
        const deadline = Date.now() + RUN_DEADLINE_MS;
        let atKill = 0;
        for (;;) {
          atKill = await appliedCount();
          if (atKill >= KILL_AFTER) {
            break;
          }
          expect(Date.now(), `only ${atKill} applied\n${first.output.stderr}`).toBeLessThan(
            deadline,
          );
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await killHard(first);
        const afterKill = await appliedCount();
        // Some but not all: the kill came in the middle of the run.
        expect(afterKill).toBeGreaterThanOrEqual(KILL_AFTER);
        expect(afterKill).toBeLessThan(DUE);

        const second = startWorker(url);
        workers.push(second);
        await waitForLine(second, /Haven worker running/);
        for (;;) {
          const applied = await appliedCount();
          if (applied === DUE) {
            break;
          }
          expect(Date.now(), `${applied} of ${DUE} applied\n${second.output.stderr}`).toBeLessThan(
            deadline,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // The second worker finished what the first left: its log counts the rest.
        await waitForLine(second, /"applied":\d+.*"msg":"age changes applied"/);

        const children = await db
          .selectFrom('children')
          .innerJoin('policies', 'policies.child_id', 'children.id')
          .select([
            'children.id',
            'children.birth_date',
            'children.age_applied',
            'children.next_age_change_on',
            'policies.version',
            'policies.status',
          ])
          .where('children.family_id', 'in', familyIds)
          .execute();
        expect(children).toHaveLength(DUE);
        const at = new Date(`${today}T00:00:00.000Z`);
        const wrong: string[] = [];
        const ageOf = new Map<string, number>();
        for (const child of children) {
          const age = ageOn(child.birth_date, at);
          ageOf.set(child.id, age);
          const version = rulesChangeAt(age) ? 2 : 1;
          if (
            child.age_applied !== age ||
            child.next_age_change_on <= today ||
            child.version !== version ||
            child.status !== 'active'
          ) {
            wrong.push(
              `${child.id} age ${age}: ${JSON.stringify(child)}, version ${version} wanted`,
            );
          }
        }
        expect(wrong.slice(0, 5)).toEqual([]);
        // Both kinds occur: ages whose rules change and ages whose rules stay.
        expect(new Set(children.map((child) => child.version))).toEqual(new Set([1, 2]));

        const messages = await db
          .selectFrom('webhook_deliveries')
          .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
          .select(['webhooks.family_id', 'webhook_deliveries.payload'])
          .where('webhook_deliveries.attempt', '=', 1)
          .where('webhook_deliveries.event', '=', 'child.age_changed')
          .where('webhooks.family_id', 'in', familyIds)
          .execute();
        const perChild = new Map<string, number>();
        for (const message of messages) {
          const { data } = JSON.parse(message.payload) as {
            data: { child_id: string; age: number };
          };
          expect(data.age).toBe(ageOf.get(data.child_id));
          perChild.set(data.child_id, (perChild.get(data.child_id) ?? 0) + 1);
        }
        expect(messages).toHaveLength(DUE);
        expect(perChild.size).toBe(DUE);

        const { due } = await db
          .selectFrom('children')
          .select((eb) => eb.fn.countAll<string>().as('due'))
          .where('next_age_change_on', '<=', today)
          .executeTakeFirstOrThrow();
        expect(Number(due)).toBe(0);
      },
      TEST_TIMEOUT_MS,
    );
  },
);
