// `npm run bench -- --age-run`: the daily age run (CONTRACT.md §11.1) on a day's birthdays
// among 1 000 000 children, on PostgreSQL, in a Haven process as `npm start` runs it (workers
// inline, the run looking every 60 s). Reports:
// - how long the run takes from its first child to its last (goal: under 60 s);
// - EXPLAIN (ANALYZE, BUFFERS) of the statement that claims each batch (claimDueChildren's, as
//   Kysely compiles it), with the birthdays due and once none is;
// - the latency of two hot API rows at a steady rate, Haven idle and during the run (goal:
//   within 20 %).
// Seeding the million children takes about a minute, so this is its own bench, not a row of
// every `npm run bench` (docs/performance.md "The age run").
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/storage.js';
import { claimDueChildren } from '../src/modules/children/store.js';
import { storeDueChildren, storeWebhooks } from '../test/due-children.js';
import { WebhookReceiver } from '../test/webhook-receiver.js';
import { seedBenchTenant } from './bench-tenant.js';
import { statementsOf } from './recorded-statements.js';

const DATABASE = 'haven_bench_age';
const CHILDREN = 1_000_000;
/** A day's birthdays among a million children (1 000 000 / 365). */
const DUE = 2_700;
/** The ages turned today, in turn (13 and 17 change the generated rules, 12 and 11 none). */
const AGES = [13, 12, 17, 11, 13, 8];
/** One child in this many of the others has a policy with its 20 rules. */
const OTHER_POLICIES_EVERY = 50;
const RUN_GOAL_SECONDS = 60;
const LATENCY_GOAL = 1.2;
/** The steady load each latency row is measured at. */
const RATE = 1_000;
const CONNECTIONS = 10;
const WARMUP_SECONDS = 3;
const MEASURE_SECONDS = 6;
const ROOT = new URL('..', import.meta.url).pathname;
/**
 * BENCH_AGE_RUN_WEBHOOKS=0 gives the due families no webhook: the run without the deliveries
 * its messages cause (which the same process makes while the run goes on).
 */
const WEBHOOKS = process.env.BENCH_AGE_RUN_WEBHOOKS !== '0';
/**
 * BENCH_AGE_RUN_PROCESSES=split runs the production process model instead: the API with
 * WORKERS=off and one `npm run worker` process, which makes the run and the deliveries.
 */
const SPLIT = process.env.BENCH_AGE_RUN_PROCESSES === 'split';
const NICE = process.env.BENCH_AGE_RUN_WORKER_NICE ?? '19';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function freshDatabase(adminUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${DATABASE} with (force)`);
    await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/** Migrates, and makes a key (its org's tier unlimited) and a family of two children. */
async function seedApi(databaseUrl: string) {
  const storage = await openStorage({ databaseUrl, dataDir: 'memory' });
  const app = await buildApp(
    loadConfig({ DATABASE_URL: databaseUrl, DATA_DIR: 'memory', LOG_LEVEL: 'silent' }),
    { database: storage.database },
  );
  try {
    const tenant = await seedBenchTenant(app, storage.database.db);
    return { keyAuth: tenant.key, familyId: tenant.familyId };
  } finally {
    await app.close();
    await storage.close();
  }
}

/** The claim statement's plan on the data as it is now (rolled back: it locks a row). */
async function explainClaim(client: pg.Client, today: string): Promise<string> {
  const [statement] = await statementsOf((db) =>
    claimDueChildren(db, { clock: 'real', today }, 25),
  );
  if (!statement) {
    throw new Error('claimDueChildren sent no statement');
  }
  await client.query('begin');
  try {
    const plan = await client.query(
      `explain (analyze, buffers) ${statement.sql}`,
      statement.parameters,
    );
    return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.query('rollback');
  }
}

async function dueCount(client: pg.Client, today: string): Promise<number> {
  const result = await client.query(
    'select count(*) as n from children where next_age_change_on <= $1',
    [today],
  );
  return Number(result.rows[0].n);
}

interface Latency {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  non2xx: number;
}

function load(url: string, headers: Record<string, string>, seconds: number): Promise<Latency> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, headers, connections: CONNECTIONS, overallRate: RATE, duration: seconds },
      (error, result) =>
        error
          ? reject(error)
          : resolve({
              rps: result.requests.average,
              p50: result.latency.p50,
              p90: result.latency.p90,
              p99: result.latency.p99,
              mean: result.latency.average,
              non2xx: result.non2xx + result.errors,
            }),
    );
  });
}

/** Starts Haven as `npm start` does and waits until its /health answers. */
async function startHaven(env: Record<string, string>, url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/health`)).ok) {
        return child;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      throw new Error('Haven did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);

export async function ageRunBench(): Promise<string[]> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const databaseUrl = await freshDatabase(adminUrl);
  const lines: string[] = [];
  const note = (line: string) => {
    lines.push(line);
    process.stderr.write(`[age-run] ${line}\n`);
  };
  const { keyAuth, familyId } = await seedApi(databaseUrl);
  const receiver = new WebhookReceiver();
  await receiver.start();
  const today = new Date().toISOString().slice(0, 10);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let haven: ChildProcess | undefined;
  let worker: ChildProcess | undefined;
  try {
    const seedStarted = performance.now();
    const { familyIds } = await storeDueChildren(databaseUrl, {
      today,
      due: DUE,
      ages: AGES,
      // The bench family's two and the sandbox's demo family's three are children too.
      others: CHILDREN - DUE - 5,
      otherPoliciesEvery: OTHER_POLICIES_EVERY,
    });
    if (WEBHOOKS) {
      const storage = await openStorage({ databaseUrl, dataDir: 'memory' }, { migrate: false });
      await storeWebhooks(storage.database.db, familyIds, receiver.url);
      await storage.close();
    }
    await client.query('vacuum analyze');
    const counts = (
      await client.query(`select (select count(*) from children) as children,
                                 (select count(*) from policies) as policies,
                                 (select count(*) from policy_rules) as rules,
                                 (select count(*) from webhooks) as webhooks`)
    ).rows[0];
    const due = await dueCount(client, today);
    note(
      `seeded in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s: ${counts.children} children, ${due} due today (${today}), ${counts.policies} policies, ${counts.rules} rules, ${counts.webhooks} webhooks`,
    );
    const planDue = await explainClaim(client, today);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const startedAt = performance.now();
    haven = await startHaven(
      {
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        WORKERS: SPLIT ? 'off' : 'inline',
      },
      base,
    );
    if (SPLIT) {
      // At the lowest CPU priority (NICE=19 by default): background work yields the cores
      // to the API on a shared host.
      worker = spawn('nice', ['-n', NICE, process.execPath, 'dist/worker.js'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    }
    const rows = [
      { name: 'key-authenticated catalog read (6 KB)', path: '/api/v1/developer/platforms' },
      {
        name: 'key-authenticated children read',
        path: `/api/v1/developer/families/${familyId}/children`,
      },
    ];
    const idle = new Map<string, Latency>();
    for (const row of rows) {
      await load(`${base}${row.path}`, keyAuth, WARMUP_SECONDS);
      idle.set(row.name, await load(`${base}${row.path}`, keyAuth, MEASURE_SECONDS));
    }
    const idleFor = (performance.now() - startedAt) / 1000;
    if ((await dueCount(client, today)) !== due) {
      throw new Error(`the run began within the idle figures (${idleFor.toFixed(0)} s)`);
    }

    // The run: Haven's first look is 60 s after it started. Polled every 20 ms from here.
    let runStart: number | undefined;
    let runEnd: number | undefined;
    const deadline = Date.now() + 10 * 60_000;
    const poller = (async () => {
      while (runEnd === undefined && Date.now() < deadline) {
        const left = await dueCount(client, today);
        const now = performance.now();
        if (runStart === undefined && left < due) {
          runStart = now;
        }
        if (left === 0) {
          runEnd = now;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    while (runStart === undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const during = new Map<string, { latency: Latency; whole: boolean }>();
    for (const row of rows) {
      const latency = await load(`${base}${row.path}`, keyAuth, MEASURE_SECONDS);
      during.set(row.name, { latency, whole: runEnd === undefined });
    }
    await poller;
    if (runStart === undefined || runEnd === undefined) {
      throw new Error('the run did not finish within 10 minutes');
    }
    const runSeconds = (runEnd - runStart) / 1000;
    const planNone = await explainClaim(client, today);
    const stored = await client.query(
      `select count(*) as messages, count(distinct payload::jsonb -> 'data' ->> 'child_id') as children
       from webhook_deliveries where attempt = 1 and event = 'child.age_changed'`,
    );
    const bumped = await client.query(
      `select count(*) as n from policies where version = 2 and updated_at > now() - interval '1 hour'`,
    );

    note(
      `run: ${due} children in ${runSeconds.toFixed(1)} s (${((runSeconds * 1000) / due).toFixed(1)} ms a child; goal < ${RUN_GOAL_SECONDS} s: ${runSeconds < RUN_GOAL_SECONDS ? 'met' : 'NOT met'}); ${stored.rows[0].messages} child.age_changed messages for ${stored.rows[0].children} children; ${bumped.rows[0].n} policies one version up`,
    );
    lines.push(
      '',
      `Latency at a steady ${RATE} requests/s (${CONNECTIONS} connections, ${MEASURE_SECONDS} s a figure), Haven idle and during the run:`,
      '',
      '| row | idle p50 ms | idle p90 ms | idle p99 ms | idle mean ms | run p50 ms | run p90 ms | run p99 ms | run mean ms | mean ratio | goal | met | whole figure within the run | non-2xx |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|',
    );
    for (const row of rows) {
      const a = idle.get(row.name) as Latency;
      const { latency: b, whole } = during.get(row.name) as { latency: Latency; whole: boolean };
      const ratio = b.mean / a.mean;
      lines.push(
        `| ${row.name} | ${a.p50} | ${a.p90} | ${a.p99} | ${ms(a.mean)} | ${b.p50} | ${b.p90} | ${b.p99} | ${ms(b.mean)} | ${ratio.toFixed(2)} | ≤ ${LATENCY_GOAL} | ${ratio <= LATENCY_GOAL ? 'yes' : 'no'} | ${whole ? 'yes' : 'no (the run ended first)'} | ${a.non2xx + b.non2xx} |`,
      );
    }
    lines.push(
      '',
      'The claim statement, birthdays due:',
      '',
      '```',
      planDue,
      '```',
      '',
      'The claim statement, nothing due (every later look):',
      '',
      '```',
      planNone,
      '```',
    );
    return lines;
  } finally {
    for (const child of [worker, haven]) {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    await client.end();
    await receiver.stop();
  }
}
