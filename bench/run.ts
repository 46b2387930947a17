// `npm run bench`: the bare node:http yardstick and Haven (embedded database, seeded on disk),
// each in its own process, loaded in turn by autocannon from this one. Figures are ratios
// to bare in the same run, so they mean the same on any machine. Never part of `npm test`.
// `npm run bench -- --soak [seconds]` runs the memory soak instead (bench/soak.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/storage.js';
import { createOrgsService } from '../src/modules/orgs/service.js';
import { createUsersService } from '../src/modules/users/service.js';
import { signedRequest } from '../test/ocss-signer.js';
import { clientAddress } from './client-address.js';
import { soak, soakSeconds } from './soak.js';

interface Row {
  name: string;
  /** Each request from another client address (X-Forwarded-For; the server trusts it). */
  spreadClients?: boolean;
  /** Each request with the next of these values in a header (e.g. many device keys). */
  rotate?: { header: string; values: string[] };
  /** Counted by the rate limiter: also measured with Redis buckets. */
  metered?: boolean;
  /** Reads or writes the database: also measured on PostgreSQL. */
  database?: boolean;
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface Credentials {
  session: Record<string, string>;
  key: Record<string, string>;
  /** A family of the key's org, with two children. */
  familyId: string;
  trustListEtag: string;
  /** Device keys of one child with an active policy, and that policy's ETag. */
  devices: { keys: string[]; etag: string };
  /** A signed bulk read (no nonce, so it may be sent again within the 300 s window). */
  signedBulk?: { headers: Record<string, string>; body: string };
}

/**
 * Seeds the embedded database before the server owns it: a session user, an org raised to
 * an effectively unlimited tier (so the bench measures serving, not 429s) and a key — all
 * made through the API, in this process, then handed over on disk.
 */
/** Registers a bench advisor and signs one bulk read for the server at `baseUrl`. */
async function signedBulkRead(
  app: Awaited<ReturnType<typeof buildApp>>,
  baseUrl: string,
): Promise<Credentials['signedBulk']> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const registered = await app.inject({
    method: 'POST',
    url: '/api/v1/advisors/self-register',
    payload: {
      did: 'did:ocss:bench-reader',
      public_key_b64url: publicKey.export({ format: 'jwk' }).x,
    },
  });
  const signed = await signedRequest(
    { keyId: registered.json().key_id, privateKey },
    '/api/v1/csm/reviews/bulk',
    { body: { slugs: [], cursor: '' }, baseUrl },
  );
  return { headers: signed.headers as Record<string, string>, body: String(signed.payload) };
}

async function seed(
  storageConfig: { databaseUrl?: string; dataDir: string },
  publicBaseUrl?: string,
): Promise<Credentials> {
  const storage = await openStorage({
    databaseUrl: storageConfig.databaseUrl,
    dataDir: storageConfig.dataDir,
  });
  const app = await buildApp(
    loadConfig({
      DATA_DIR: storageConfig.dataDir,
      ...(storageConfig.databaseUrl ? { DATABASE_URL: storageConfig.databaseUrl } : {}),
      LOG_LEVEL: 'silent',
    }),
    { database: storage.database },
  );
  try {
    const session = (
      await app.inject({ method: 'POST', url: '/api/v1/sandbox/session-token' })
    ).json();
    const auth = { authorization: `Bearer ${session.access_token}` };
    const org = (
      await app.inject({
        method: 'POST',
        url: '/api/v1/developers/orgs',
        headers: auth,
        payload: { name: 'Bench' },
      })
    ).json();
    // Before the org's first keyed request, so no cached limit of 100 gets in the way of
    // seeding (thousands of devices) or of the rows.
    const deps = { db: storage.database.db, clock: systemClock };
    await createOrgsService({ ...deps, users: createUsersService(deps) }).setTier(
      org.id,
      'bench',
      1e9,
    );
    const key = (
      await app.inject({
        method: 'POST',
        url: `/api/v1/developers/orgs/${org.id}/keys`,
        headers: auth,
        payload: { name: 'bench', environment: 'test' },
      })
    ).json();
    const keyAuth = { authorization: `Bearer ${key.key}` };
    const family = (
      await app.inject({
        method: 'POST',
        url: '/api/v1/developer/families',
        headers: keyAuth,
        payload: { name: 'Bench Family' },
      })
    ).json();
    for (const [name, birth_date] of [
      ['Ada', '2016-05-01'],
      ['Bo', '2012-09-14'],
    ]) {
      await app.inject({
        method: 'POST',
        url: `/api/v1/developer/families/${family.id}/children`,
        headers: keyAuth,
        payload: { name, birth_date },
      });
    }
    const devices = await seedDevices(app, keyAuth);
    const signedBulk = publicBaseUrl ? await signedBulkRead(app, publicBaseUrl) : undefined;
    // Read after the last registration, which re-issued the list.
    const trustList = await app.inject({ url: '/.well-known/ocss/trust-list' });
    return {
      session: auth,
      key: keyAuth,
      familyId: family.id,
      trustListEtag: String(trustList.headers.etag),
      devices,
      signedBulk,
    };
  } finally {
    await app.close();
    await storage.close();
  }
}

/**
 * Enough devices that none reaches its own 100-a-minute bucket during a row: the rows
 * measure serving a device, not its rate limit.
 */
const DEVICES = 2000;

async function seedDevices(app: FastifyInstance, keyAuth: Record<string, string>) {
  const setup = (
    await app.inject({
      method: 'POST',
      url: '/api/v1/developer/setup/quick',
      headers: keyAuth,
      payload: { child_name: 'Device Kid', birth_date: '2015-02-03' },
    })
  ).json();
  const keys: string[] = [];
  for (let i = 0; i < DEVICES; i++) {
    const created = await app.inject({
      method: 'POST',
      url: `/api/v1/developer/children/${setup.child.id}/devices`,
      headers: keyAuth,
      payload: { device_name: `Bench device ${i}` },
    });
    keys.push(created.json().device_key);
  }
  const policy = await app.inject({
    url: '/api/v1/device/policy',
    headers: { 'x-device-key': keys[0] as string },
  });
  return { keys, etag: String(policy.headers.etag) };
}

/** Later capabilities add their hot routes here. */
function rows(auth: Credentials): Row[] {
  return [
    { name: 'GET /health', path: '/health' },
    {
      // The conditional read every federation member polls: 304 from memory.
      name: 'GET /.well-known/ocss/trust-list (If-None-Match, 304)',
      path: '/.well-known/ocss/trust-list',
      headers: { 'if-none-match': auth.trustListEtag },
    },
    ...(auth.signedBulk
      ? [
          {
            // First 25 reviews: RFC 9421 verification, key lookup, catalog page. Signed
            // once, no nonce; spread over client addresses so the per-IP bucket (100/min)
            // does not turn the row into a 429 measurement.
            name: 'POST /api/v1/csm/reviews/bulk (signed, Ed25519)',
            method: 'POST' as const,
            path: '/api/v1/csm/reviews/bulk',
            headers: auth.signedBulk.headers,
            body: auth.signedBulk.body,
            spreadClients: true,
          },
        ]
      : []),
    {
      name: 'GET /api/v1/developer/platforms (API key, catalog)',
      path: '/api/v1/developer/platforms',
      headers: auth.key,
      metered: true,
    },
    {
      name: 'GET /api/v1/developer/families (API key, database read)',
      path: '/api/v1/developer/families',
      headers: auth.key,
      database: true,
    },
    {
      name: 'GET /api/v1/developer/families/{id}/children (API key, database read)',
      path: `/api/v1/developer/families/${auth.familyId}/children`,
      headers: auth.key,
      database: true,
    },
    {
      // What every on-device agent polls: key from memory, one small query, empty 304.
      name: 'GET /api/v1/device/policy (device key, If-None-Match, 304)',
      path: '/api/v1/device/policy',
      headers: { 'if-none-match': auth.devices.etag },
      rotate: { header: 'x-device-key', values: auth.devices.keys },
      database: true,
    },
    {
      name: 'GET /api/v1/device/policy (device key, compiled policy)',
      path: '/api/v1/device/policy',
      rotate: { header: 'x-device-key', values: auth.devices.keys },
      database: true,
    },
    {
      // Without family_id every call writes a new family, child, policy and 20 rules.
      name: 'POST /api/v1/developer/setup/quick (API key, transaction of 24 rows)',
      method: 'POST',
      path: '/api/v1/developer/setup/quick',
      headers: { ...auth.key, 'content-type': 'application/json' },
      body: JSON.stringify({ child_name: 'Bench Kid', birth_date: '2016-05-01' }),
      database: true,
    },
  ];
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROOT = new URL('..', import.meta.url).pathname;

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startServer(args: string[], env: Record<string, string>, fixedPort?: number) {
  const port = fixedPort ?? (await freePort());
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) {
        return { child, url: `http://127.0.0.1:${port}` };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      throw new Error(`${args.join(' ')} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** Responses other than 2xx, by class ("3xx 1234"): a 304 row expects only 3xx. */
  non2xx: string;
}

/** Rewrites X-Forwarded-For on every request: a new client address each time. */
function spreadOverClients(): Partial<autocannon.Options> {
  let client = 0;
  return {
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          client++;
          request.headers = {
            ...request.headers,
            'x-forwarded-for': clientAddress(client),
          };
          return request;
        },
      },
    ],
  };
}

function rotateHeader(rotate: { header: string; values: string[] }): Partial<autocannon.Options> {
  let next = 0;
  return {
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          request.headers = {
            ...request.headers,
            [rotate.header]: rotate.values[next++ % rotate.values.length] as string,
          };
          return request;
        },
      },
    ],
  };
}

async function load(url: string, row: Row, duration = SECONDS): Promise<Figures> {
  const result = await autocannon({
    url: `${url}${row.path}`,
    method: row.method ?? 'GET',
    headers: row.headers,
    body: row.body,
    connections: CONNECTIONS,
    duration,
    ...(row.spreadClients ? spreadOverClients() : {}),
    ...(row.rotate ? rotateHeader(row.rotate) : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx:
      (['1xx', '3xx', '4xx', '5xx'] as const)
        .filter((kind) => result[kind] > 0)
        .map((kind) => `${kind} ${result[kind]}`)
        .join(', ') || '0',
  };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** A fresh database on the PostgreSQL server at `adminUrl`, or undefined if none answers. */
async function freshPostgres(adminUrl: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('drop database if exists haven_bench');
    await client.query('create database haven_bench');
    const url = new URL(adminUrl);
    url.pathname = '/haven_bench';
    return url.toString();
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'haven-bench-'));
const havenPort = await freePort();
const auth = await seed({ dataDir }, `http://127.0.0.1:${havenPort}`);
const soakFor = soakSeconds(process.argv);
if (soakFor !== undefined) {
  const server = await startServer(
    ['dist/main.js'],
    { DATA_DIR: dataDir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', TRUST_PROXY: 'true' },
    havenPort,
  );
  try {
    const report = await soak(
      {
        url: server.url,
        pid: server.child.pid as number,
        apiKey: auth.key,
        deviceKeys: auth.devices.keys,
        deviceEtag: auth.devices.etag,
      },
      soakFor,
      CONNECTIONS,
    );
    process.stdout.write(`${report.join('\n')}\n`);
  } finally {
    await stop(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(0);
}
const postgresAdminUrl =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const postgresUrl = await freshPostgres(postgresAdminUrl);
const postgresAuth = postgresUrl ? await seed({ databaseUrl: postgresUrl, dataDir }) : undefined;
const bare = await startServer(['bench/bare-server.mjs'], {});
const haven = await startServer(
  ['dist/main.js'],
  {
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    // Only the signed row sends X-Forwarded-For (a client address per request).
    TRUST_PROXY: 'true',
  },
  havenPort,
);
// The same seeded data behind PostgreSQL is not needed for the Redis row: rate limiting is
// what changes. A second instance on a copy of the data directory uses Redis buckets.
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisDataDir = `${dataDir}-redis`;
cpSync(dataDir, redisDataDir, { recursive: true, filter: (path) => !path.endsWith('haven.lock') });
const havenRedis = (await redisAnswers(redisUrl))
  ? await startServer(['dist/main.js'], {
      DATA_DIR: redisDataDir,
      REDIS_URL: redisUrl,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    })
  : undefined;
const havenPostgres = postgresUrl
  ? await startServer(['dist/main.js'], {
      DATABASE_URL: postgresUrl,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    })
  : undefined;
try {
  const lines = [
    `Haven bench: ${CONNECTIONS} connections, ${SECONDS} s per row, node ${process.version}`,
    '',
    '| route | bare req/s | Haven req/s | vs bare | Haven p50 ms | Haven p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const targets = [{ label: '', server: haven, rows: rows(auth) }];
  if (havenRedis) {
    targets.push({
      label: ' [Redis buckets]',
      server: havenRedis,
      rows: rows(auth).filter((row) => row.metered),
    });
  } else {
    lines.push(`(no Redis at ${redisUrl}: Redis rows skipped)`, '');
  }
  if (havenPostgres && postgresAuth) {
    targets.push({
      label: ' [PostgreSQL]',
      server: havenPostgres,
      rows: rows(postgresAuth).filter((row) => row.database),
    });
  } else {
    lines.push(`(no PostgreSQL at ${postgresAdminUrl}: PostgreSQL rows skipped)`, '');
  }
  for (const { label, server, rows: targetRows } of targets) {
    for (const row of targetRows) {
      // Warm both (JIT, caches) before measuring.
      await autocannon({ url: `${bare.url}${row.path}`, duration: 1, connections: CONNECTIONS });
      await load(server.url, row, 1);
      const yardstick = await load(bare.url, { ...row, path: row.path });
      const figures = await load(server.url, row);
      const ratio = ((figures.rps / yardstick.rps) * 100).toFixed(1);
      lines.push(
        `| ${row.name}${label} | ${Math.round(yardstick.rps)} | ${Math.round(figures.rps)} | ${ratio} % | ${figures.p50} | ${figures.p99} | ${figures.non2xx} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all([
    stop(bare.child),
    stop(haven.child),
    havenRedis && stop(havenRedis.child),
    havenPostgres && stop(havenPostgres.child),
  ]);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(redisDataDir, { recursive: true, force: true });
}
