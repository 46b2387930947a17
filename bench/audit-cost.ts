// `npm run bench -- --audit-cost`: what an audit entry costs a write (CONTRACT.md §12.1). The
// quick setup and a rule PUT, each measured on the same build with the log on and with it off
// (HAVEN_BENCH_AUDIT_LOG=off, read only by src/main.ts for this bench), on the embedded
// database and on PostgreSQL. Runs alternate on/off/on/off so a drift of the machine falls on
// both sides; the figure is the median rate of each side. Goal: at most 15 % fewer writes a
// second with the log. Then the log's size: table and index bytes per entry.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/storage.js';
import { seedBenchTenant } from './bench-tenant.js';
import { freshPostgres, median, startHaven, stopHaven } from './haven-process.js';

const DATABASE = 'haven_bench_audit';
const GOAL_LOSS = 0.15;
const ROUNDS = Number(process.env.BENCH_AUDIT_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_AUDIT_SECONDS ?? 5);
const CONNECTIONS = 10;
/** The spread rule PUT row's policies: one per connection, each in its own family. */
const SPREAD_FAMILIES = CONNECTIONS;

interface Target {
  name: 'PGlite' | 'PostgreSQL';
  env: Record<string, string>;
  storage: { databaseUrl: string | undefined; dataDir: string };
}

/** The bench tenant, and a policy whose rule the PUT row replaces. */
async function seed(storageOptions: Target['storage']) {
  const storage = await openStorage(storageOptions);
  const app = await buildApp(
    loadConfig({
      DATA_DIR: storageOptions.dataDir,
      ...(storageOptions.databaseUrl ? { DATABASE_URL: storageOptions.databaseUrl } : {}),
      LOG_LEVEL: 'silent',
    }),
    { database: storage.database },
  );
  try {
    const tenant = await seedBenchTenant(app, storage.database.db);
    const policyIds: string[] = [];
    for (let i = 0; i < SPREAD_FAMILIES; i++) {
      // Each in a family of its own (no family_id): a family's writes follow each other on
      // its audit chain, so the spread row's writers never wait for one another.
      const setup = await app.inject({
        method: 'POST',
        url: '/api/v1/developer/setup/quick',
        headers: tenant.key,
        payload: { child_name: 'Rule Kid', birth_date: '2015-02-03' },
      });
      policyIds.push(setup.json().policy.id as string);
    }
    return { key: tenant.key, policyIds };
  } finally {
    await app.close();
    await storage.close();
  }
}

interface Row {
  name: string;
  method: 'POST' | 'PUT';
  /** One path, or paths taken in turn request after request. */
  paths: string[];
  body: string;
}

async function rate(url: string, request: Row, key: Record<string, string>) {
  let turn = 0;
  const result = await autocannon({
    url,
    headers: { ...key, 'content-type': 'application/json' },
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: request.method,
        body: request.body,
        setupRequest: (req) => {
          req.path = request.paths[turn++ % request.paths.length] as string;
          return req;
        },
      },
    ],
  });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) {
    throw new Error(`${request.method} ${request.paths[0]}: ${failed} answers were not 2xx`);
  }
  return result.requests.average;
}

async function measure(target: Target) {
  const { key, policyIds } = await seed(target.storage);
  const rulePath = (policyId: string) =>
    `/api/v1/developer/policies/${policyId}/rules/web_filter_level`;
  const rule = JSON.stringify({ enabled: true, config: { level: 'strict' } });
  const rows: Row[] = [
    {
      name: 'quick setup (new family, 24 rows)',
      method: 'POST',
      paths: ['/api/v1/developer/setup/quick'],
      body: JSON.stringify({ child_name: 'Bench Kid', birth_date: '2016-05-01' }),
    },
    {
      name: `rule PUT, ${SPREAD_FAMILIES} families`,
      method: 'PUT',
      paths: policyIds.map(rulePath),
      body: rule,
    },
    {
      // Every writer on one policy: they follow each other on its row already (its version),
      // and with the log on its family's chain too, so each waits for the other's entry.
      name: 'rule PUT, one policy',
      method: 'PUT',
      paths: [rulePath(policyIds[0] as string)],
      body: rule,
    },
  ];
  const rates = new Map(rows.map((row) => [row.name, { on: [] as number[], off: [] as number[] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of ['on', 'off'] as const) {
      const server = await startHaven({
        ...target.env,
        ...(side === 'off' ? { HAVEN_BENCH_AUDIT_LOG: 'off' } : {}),
      });
      try {
        for (const row of rows) {
          rates.get(row.name)?.[side].push(await rate(server.url, row, key));
        }
      } finally {
        await stopHaven(server.child);
      }
    }
  }
  const lines = rows.map((row) => {
    const { on, off } = rates.get(row.name) ?? { on: [], off: [] };
    const loss = 1 - median(on) / median(off);
    const verdict = loss <= GOAL_LOSS ? 'met' : 'NOT MET';
    return `| ${target.name} | ${row.name} | ${median(off).toFixed(0)} | ${median(on).toFixed(0)} | ${(loss * 100).toFixed(1)} % | ${verdict} |`;
  });
  return { lines, size: await logSize(target.storage) };
}

/** Bytes the log's table (with TOAST) and its indexes take per entry. */
async function logSize(storageOptions: Target['storage']) {
  const storage = await openStorage(storageOptions);
  try {
    const { rows } = await sql<{ entries: string; table_bytes: string; index_bytes: string }>`
      select count(*) as entries,
        pg_table_size('audit_entries') as table_bytes,
        pg_indexes_size('audit_entries') as index_bytes
      from audit_entries`.execute(storage.database.db);
    const row = rows[0];
    const entries = Number(row?.entries ?? 0);
    const per = (bytes: string | undefined) => (entries ? Number(bytes) / entries : 0).toFixed(0);
    return `${entries} entries: ${per(row?.table_bytes)} bytes/entry in the table, ${per(row?.index_bytes)} in its indexes`;
  } finally {
    await storage.close();
  }
}

export async function auditCostBench(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'haven-bench-audit-'));
  const targets: Target[] = [
    { name: 'PGlite', env: { DATA_DIR: dataDir }, storage: { databaseUrl: undefined, dataDir } },
  ];
  const postgresUrl = await freshPostgres(
    process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    DATABASE,
  );
  if (postgresUrl) {
    targets.push({
      name: 'PostgreSQL',
      env: { DATABASE_URL: postgresUrl, DATA_DIR: 'memory' },
      storage: { databaseUrl: postgresUrl, dataDir: 'memory' },
    });
  }
  const report = [
    `Audit log cost: median of ${ROUNDS} alternating runs per side, ${SECONDS} s each, ${CONNECTIONS} connections.`,
    '',
    '| database | row | log off (req/s) | log on (req/s) | loss | goal ≤ 15 % |',
    '|---|---|---|---|---|---|',
  ];
  const sizes: string[] = [];
  try {
    for (const target of targets) {
      const { lines, size } = await measure(target);
      report.push(...lines);
      sizes.push(`${target.name}: ${size}`);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (!postgresUrl) {
    report.push('', 'PostgreSQL did not answer: its rows were not measured.');
  }
  return [...report, '', ...sizes];
}
