// `npm run bench -- --telemetry-cost`: what metrics and traces cost the hot rows (CONTRACT.md
// §13). The same build started three ways, in turn, round after round: metrics off
// (HAVEN_BENCH_METRICS=off, read only by src/main.ts for this bench), metrics on (every
// deployment), and metrics on with traces exported by OTLP/HTTP to a sink in this process.
// Each side's figure is the median rate of its rounds, and each round starts with the next
// side, so neither a drift of the machine nor a place in the round favours one side. Goal: metrics on loses at most 5 % on each row; the tracing cost is written
// down. Then the scrape: one GET /metrics of a server that answered the rows, and the
// exposition of a registry holding 150 routes' series (goal: under 10 ms).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/storage.js';
import { createMetrics } from '../src/telemetry/metrics.js';
import { seedBenchTenant, seedDevices } from './bench-tenant.js';
import { freshPostgres, median, startHaven, stopHaven } from './haven-process.js';

const DATABASE = 'haven_bench_telemetry';
const GOAL_LOSS = 0.05;
const SCRAPE_GOAL_MS = 10;
const ROUNDS = Number(process.env.BENCH_TELEMETRY_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_TELEMETRY_SECONDS ?? 5);
const WARMUP_SECONDS = 2;
const CONNECTIONS = 50;
/**
 * Devices polled in turn by the 304 row: each has its own 100-a-minute bucket, and a fresh
 * server's buckets start empty, so 5 000 keep every poll of a side's ~7 s under its limit.
 */
const DEVICES = 5_000;
const SCRAPE_ROUTES = 150;
const SCRAPES = 200;

type Side = 'metrics off' | 'metrics on' | 'metrics + traces';
const SIDES: Side[] = ['metrics off', 'metrics on', 'metrics + traces'];

interface Row {
  name: string;
  path: string;
  headers: Record<string, string>;
  /** Each request with the next of these values in this header. */
  rotate?: { header: string; values: string[] };
}

async function seed(storageOptions: { databaseUrl: string | undefined; dataDir: string }) {
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
    const devices = await seedDevices(app, tenant.key, DEVICES);
    const trustList = await app.inject({ url: '/.well-known/ocss/trust-list' });
    const rows: Row[] = [
      {
        name: 'key-authenticated catalog read (6 KB)',
        path: '/api/v1/developer/platforms',
        headers: tenant.key,
      },
      {
        name: 'key-authenticated children read',
        path: `/api/v1/developer/families/${tenant.familyId}/children`,
        headers: tenant.key,
      },
      {
        name: 'trust list 304',
        path: '/.well-known/ocss/trust-list',
        headers: { 'if-none-match': String(trustList.headers.etag) },
      },
      {
        name: 'device policy poll, 304',
        path: '/api/v1/device/policy',
        headers: { 'if-none-match': devices.etag },
        rotate: { header: 'x-device-key', values: devices.keys },
      },
    ];
    return rows;
  } finally {
    await app.close();
    await storage.close();
  }
}

/** An OTLP/HTTP collector that takes every export and keeps only a count of bytes. */
async function otlpSink(): Promise<{ url: string; bytes: () => number; close: () => void }> {
  let bytes = 0;
  const server: Server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on('end', () => response.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bytes: () => bytes, close: () => server.close() };
}

async function load(url: string, row: Row, seconds: number): Promise<number> {
  let turn = 0;
  const result = await autocannon({
    url: `${url}${row.path}`,
    headers: row.headers,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          if (row.rotate) {
            request.headers = {
              ...request.headers,
              [row.rotate.header]: row.rotate.values[turn++ % row.rotate.values.length] as string,
            };
          }
          return request;
        },
      },
    ],
  });
  const failed = result.errors + result.timeouts + result.non2xx - (result['3xx'] ?? 0);
  if (failed > 0) {
    throw new Error(`${row.name}: ${failed} answers were neither 2xx nor 304`);
  }
  return result.requests.average;
}

/** Milliseconds of each of SCRAPES scrapes of `url`/metrics, one after another. */
async function scrapeTimes(url: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < SCRAPES; i++) {
    const started = performance.now();
    const answer = await fetch(`${url}/metrics`);
    await answer.text();
    times.push(performance.now() - started);
  }
  return times;
}

/** The exposition's own time with SCRAPE_ROUTES routes' series, 3 statuses each. */
async function expositionTimes(): Promise<{ times: number[]; lines: number }> {
  const metrics = createMetrics();
  for (let route = 0; route < SCRAPE_ROUTES; route++) {
    for (const status of [200, 404, 500]) {
      metrics.request('GET', `/api/v1/bench/route-${route}/{id}`, status, 0.004);
    }
  }
  const times: number[] = [];
  let lines = 0;
  for (let i = 0; i < SCRAPES; i++) {
    const started = performance.now();
    lines = (await metrics.exposition()).split('\n').length;
    times.push(performance.now() - started);
  }
  return { times, lines };
}

const p99 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.99)] ?? 0;

export async function telemetryCostBench(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'haven-bench-telemetry-'));
  const postgresUrl = await freshPostgres(
    process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    DATABASE,
  );
  const storage = { databaseUrl: postgresUrl, dataDir: postgresUrl ? 'memory' : dataDir };
  const env: Record<string, string> = postgresUrl
    ? { DATABASE_URL: postgresUrl, DATA_DIR: 'memory' }
    : { DATA_DIR: dataDir };
  const sink = await otlpSink();
  const report: string[] = [];
  try {
    // `--only <text>` (repeatable), as the main bench takes it: the rows whose name holds one.
    const only = process.argv.flatMap((arg, at) =>
      arg === '--only' && process.argv[at + 1]
        ? [(process.argv[at + 1] as string).toLowerCase()]
        : [],
    );
    const rows = (await seed(storage)).filter(
      (row) => only.length === 0 || only.some((text) => row.name.toLowerCase().includes(text)),
    );
    const rates = new Map(
      rows.map((row) => [row.name, new Map(SIDES.map((s) => [s, [] as number[]]))]),
    );
    let scrapes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the next side: with the sides in a fixed order, the first
      // (metrics off) measured up to 40 % slower than the second on the 304 rows, and that
      // gap closed once every side took every place in turn.
      const order = SIDES.map((_, i) => SIDES[(i + round) % SIDES.length] as Side);
      for (const side of order) {
        const server = await startHaven({
          ...env,
          ...(side === 'metrics off' ? { HAVEN_BENCH_METRICS: 'off' } : {}),
          ...(side === 'metrics + traces' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : {}),
        });
        try {
          for (const row of rows) {
            await load(server.url, row, WARMUP_SECONDS);
            rates
              .get(row.name)
              ?.get(side)
              ?.push(await load(server.url, row, SECONDS));
          }
          if (side === 'metrics on') {
            scrapes = scrapes.concat(await scrapeTimes(server.url));
          }
        } finally {
          await stopHaven(server.child);
        }
      }
    }
    const exposition = await expositionTimes();
    report.push(
      `Telemetry cost on ${postgresUrl ? 'PostgreSQL' : 'PGlite'}: median of ${ROUNDS} rounds a side, ${SECONDS} s each after ${WARMUP_SECONDS} s of warm-up, ${CONNECTIONS} connections.`,
      '',
      '| row | metrics off (req/s) | metrics on (req/s) | loss | goal ≤ 5 % | metrics + traces (req/s) | loss with traces |',
      '|---|---:|---:|---:|---|---:|---:|',
    );
    for (const row of rows) {
      const side = rates.get(row.name);
      const off = median(side?.get('metrics off') ?? []);
      const on = median(side?.get('metrics on') ?? []);
      const traced = median(side?.get('metrics + traces') ?? []);
      const loss = 1 - on / off;
      report.push(
        `| ${row.name} | ${off.toFixed(0)} | ${on.toFixed(0)} | ${(loss * 100).toFixed(1)} % | ${loss <= GOAL_LOSS ? 'met' : 'NOT MET'} | ${traced.toFixed(0)} | ${((1 - traced / off) * 100).toFixed(1)} % |`,
      );
    }
    report.push(
      '',
      `Scrape over HTTP of a server that answered the rows (${scrapes.length} scrapes): median ${median(scrapes).toFixed(2)} ms, p99 ${p99(scrapes).toFixed(2)} ms.`,
      `Exposition with ${SCRAPE_ROUTES} routes' series (${exposition.lines} lines, ${SCRAPES} times): median ${median(exposition.times).toFixed(2)} ms, p99 ${p99(exposition.times).toFixed(2)} ms; goal under ${SCRAPE_GOAL_MS} ms: ${median(exposition.times) < SCRAPE_GOAL_MS ? 'met' : 'NOT MET'}.`,
      `Spans exported to the sink: ${(sink.bytes() / 1024 / 1024).toFixed(1)} MiB of OTLP.`,
    );
  } finally {
    sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return report;
}
