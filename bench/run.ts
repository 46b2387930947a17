// `npm run bench`: Haven (on PostgreSQL, and on embedded PGlite for the rows of the embedded
// path) and, for each row, a comparator doing the same work with nothing around it — a bare
// node:http hello, a bare server sending the same bytes, or a bare server + `pg` running the
// same SQL — each in its own process, loaded in turn by autocannon from this one. Figures
// are ratios to the comparator in the same run (goals: docs/performance.md), so they mean
// the same on any machine. Also the idle database load, and the children read with
// 100 000 families stored. Never part of `npm test`.
// `npm run bench -- --soak [seconds]` runs the memory soak instead (bench/soak.ts).
// `npm run bench -- --age-run` runs the age run's bench instead (bench/age-run.ts), and
// `npm run bench -- --audit-cost` what the audit log costs writes (bench/audit-cost.ts),
// `npm run bench -- --telemetry-cost` what metrics and traces cost the hot rows
// (bench/telemetry-cost.ts).
// `npm run bench -- --only <text>` (repeatable) measures only the rows whose name contains
// one of the texts ("idle" for the idle load, "startup" for the startup collection probe),
// for working on one path.
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/storage.js';
import { signedRequest } from '../test/ocss-signer.js';
import { seedBenchTenant, seedDevices } from './bench-tenant.js';
import { storeFamilies } from './bulk-families.js';
import { childrenReadStatements } from './children-read-sql.js';
import { clientAddress } from './client-address.js';
import { freshPostgres } from './haven-process.js';
import { idleTransactionsPerSecond } from './idle-load.js';
import { quickSetupStatement } from './quick-setup-sql.js';
import { soak, soakSeconds } from './soak.js';
import { probeStartupMaps, startupMapsNote } from './startup-garbage.js';

/**
 * What a row is compared with: a bare node:http hello; a bare server answering the bytes
 * Haven answered on the row; a bare server + `pg` running the SQL Haven runs for it (the
 * children read), then answering the same bytes; a bare server verifying the row's signed
 * request (digest, JSON, Ed25519), then answering the same bytes (the signed row's floor); a
 * bare server + PGlite writing quick setup's statement, then answering the same bytes (the
 * embedded quick setup's floor).
 */
type Comparator = 'hello' | 'same bytes' | 'same SQL' | 'same verification' | 'same write';

/**
 * BENCH_FRAMEWORK_BASELINE=1 runs the `same SQL` comparator inside a bare Fastify app
 * (bench/fastify-same-sql-server.mjs): what the framework itself adds to a keyed read.
 */
const FRAMEWORK_BASELINE = process.env.BENCH_FRAMEWORK_BASELINE === '1';

const COMPARATOR_NAMES: Record<Comparator, string> = {
  hello: 'bare hello',
  'same bytes': 'bare, same bytes',
  'same SQL': FRAMEWORK_BASELINE ? 'Fastify + pg, same SQL' : 'bare + pg, same SQL',
  'same verification': 'bare, Ed25519 + same bytes',
  'same write': 'bare + PGlite, same statement + same bytes',
};

interface Row {
  name: string;
  comparator: Comparator;
  /** Its goal (docs/performance.md): Haven's rate at least this share of the comparator's. */
  goal?: number;
  /** Also measured on embedded PGlite (the figures in parentheses). */
  embedded?: boolean;
  /** Counted by the rate limiter: also measured with Redis buckets. */
  metered?: boolean;
  /** Measured again once this many families are stored, against its first figure. */
  againWithFamilies?: number;
  /** Each request from another client address (X-Forwarded-For; the server trusts it). */
  spreadClients?: boolean;
  /** Each request with the next of these values in a header (e.g. many device keys). */
  rotate?: { header: string; values: string[] };
  /** Gives the row's headers and body just before it is measured (signed requests age). */
  sign?: () => Promise<SignedRow>;
  /** Set by `sign`: what a bare server needs to verify the row's signature itself. */
  verifier?: SignedRow['verifier'];
  /**
   * Also measures the row's floor: this comparator in Haven's place against the bare hello,
   * in the same load. What any server doing the row's unavoidable work reaches on this
   * machine, so how much of the gap to the goal is not Haven's. A `same write` floor is the
   * embedded database's, measured after the row's [PGlite] figure.
   */
  floor?: 'same verification' | 'same write';
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A signed request's headers and body, and what verifies its signature. */
interface SignedRow {
  headers: Record<string, string>;
  body: string;
  verifier: {
    /** The signer's Ed25519 public key (JWK `x`, base64url). */
    publicKey: string;
    /** The `@target-uri` it signed (the server's PUBLIC_BASE_URL and the path). */
    targetUri: string;
  };
}

interface Credentials {
  session: Record<string, string>;
  key: Record<string, string>;
  /** The key's org (its environment is `test`). */
  orgId: string;
  /** A family of the key's org, with two children. */
  familyId: string;
  trustListEtag: string;
  /** Device keys of one child with an active policy, and that policy's ETag. */
  devices: { keys: string[]; etag: string };
  /**
   * Signs a bulk read now. A signature without a nonce may be sent again, but only within
   * the server's 300 s window: the row signs just before it is measured.
   */
  signBulkRead?: () => Promise<SignedRow>;
}

/** Registers a bench advisor, who signs bulk reads for the server at `baseUrl`. */
async function bulkReadSigner(
  app: Awaited<ReturnType<typeof buildApp>>,
  baseUrl: string,
): Promise<Credentials['signBulkRead']> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const registered = await app.inject({
    method: 'POST',
    url: '/api/v1/advisors/self-register',
    payload: {
      did: 'did:ocss:bench-reader',
      public_key_b64url: publicKey.export({ format: 'jwk' }).x,
    },
  });
  const keyId = registered.json().key_id;
  const path = '/api/v1/csm/reviews/bulk';
  const verifier = {
    publicKey: String(publicKey.export({ format: 'jwk' }).x),
    targetUri: `${baseUrl}${path}`,
  };
  return async () => {
    const signed = await signedRequest({ keyId, privateKey }, path, {
      body: { slugs: [], cursor: '' },
      baseUrl,
    });
    return {
      headers: signed.headers as Record<string, string>,
      body: String(signed.payload),
      verifier,
    };
  };
}

/**
 * Seeds the embedded database before the server owns it: a session user, an org raised to
 * an effectively unlimited tier (so the bench measures serving, not 429s) and a key — all
 * made through the API, in this process, then handed over on disk.
 */
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
    const tenant = await seedBenchTenant(app, storage.database.db);
    const keyAuth = tenant.key;
    const devices = await seedDevices(app, keyAuth, DEVICES);
    const signBulkRead = publicBaseUrl ? await bulkReadSigner(app, publicBaseUrl) : undefined;
    // Read after the last registration, which re-issued the list.
    const trustList = await app.inject({ url: '/.well-known/ocss/trust-list' });
    return {
      session: tenant.session,
      key: keyAuth,
      orgId: tenant.orgId,
      familyId: tenant.familyId,
      trustListEtag: String(trustList.headers.etag),
      devices,
      signBulkRead,
    };
  } finally {
    await app.close();
    await storage.close();
  }
}

/**
 * Enough devices that none reaches its own 100-a-minute bucket during the two device rows:
 * the rows measure serving a device, not its rate limit. Each row polls its own half (the
 * 304 row the first POLL_304_DEVICES, the compiled row the rest), since both run within one
 * minute: from memory a poll row passed 38 000 requests a second in a fast hour (384 000 in
 * its warm-up and measured seconds: 64 for each of 6 000 devices), where 5 000 devices
 * shared by both rows reached the limit (429s in the compiled row). In a faster hour
 * (40 000 a second measured, more in the warm-up) 6 000 a row reached it too
 * (35 233 429s in the 304 row), so each row has 9 000: ~67 polls a device at 48 000 a
 * second. Not more: a row's devices must fit the key cache (10 000 secrets,
 * src/cache/secret-cache.ts), or the row would measure key loads.
 */
const DEVICES = 18_000;
const POLL_304_DEVICES = 9_000;

/** The quick setup row's body, which its floor's statement is recorded for too. */
const QUICK_SETUP_CHILD = 'Bench Kid';
const QUICK_SETUP_BIRTH_DATE = '2016-05-01';

/** The rows, in docs/performance.md's order (the families list has no goal). */
function rows(auth: Credentials): Row[] {
  return [
    {
      name: 'key-authenticated catalog read (6 KB)',
      comparator: 'same bytes',
      goal: 0.6,
      path: '/api/v1/developer/platforms',
      headers: auth.key,
      metered: true,
    },
    {
      name: 'key-authenticated children read',
      comparator: 'same SQL',
      goal: 0.8,
      path: `/api/v1/developer/families/${auth.familyId}/children`,
      headers: auth.key,
      againWithFamilies: FAMILIES_AFTER,
    },
    {
      // Not in the table. Before quick setup, whose every call adds a family to
      // this list.
      name: 'key-authenticated families list',
      comparator: 'same bytes',
      path: '/api/v1/developer/families',
      headers: auth.key,
    },
    {
      // What every on-device agent polls: key from memory, one small query, empty 304.
      name: 'device policy poll, 304 (many devices)',
      comparator: 'hello',
      goal: 0.6,
      path: '/api/v1/device/policy',
      headers: { 'if-none-match': auth.devices.etag },
      rotate: { header: 'x-device-key', values: auth.devices.keys.slice(0, POLL_304_DEVICES) },
      embedded: true,
    },
    {
      name: 'device policy, compiled 200',
      comparator: 'hello',
      goal: 0.3,
      path: '/api/v1/device/policy',
      rotate: { header: 'x-device-key', values: auth.devices.keys.slice(POLL_304_DEVICES) },
      embedded: true,
    },
    {
      // The conditional read every federation member polls: 304 from memory. The issue's
      // goal holds for every run, not only this one.
      name: 'trust list 304',
      comparator: 'hello',
      goal: 0.8,
      path: '/.well-known/ocss/trust-list',
      headers: { 'if-none-match': auth.trustListEtag },
    },
    {
      // Without family_id every call writes a new family, child, policy and 20 rules.
      name: 'quick setup (24 rows)',
      comparator: 'hello',
      goal: 0.03,
      method: 'POST',
      path: '/api/v1/developer/setup/quick',
      headers: { ...auth.key, 'content-type': 'application/json' },
      body: JSON.stringify({ child_name: QUICK_SETUP_CHILD, birth_date: QUICK_SETUP_BIRTH_DATE }),
      embedded: true,
      floor: 'same write',
    },
    ...(auth.signBulkRead
      ? [
          {
            // First 25 reviews: RFC 9421 verification, key lookup, catalog page. Signed
            // once just before the row, no nonce; spread over client addresses so the
            // per-IP bucket (100/min) does not turn the row into a 429 measurement.
            name: 'signed CSM bulk read (Ed25519)',
            comparator: 'hello' as const,
            goal: 0.35,
            method: 'POST' as const,
            path: '/api/v1/csm/reviews/bulk',
            sign: auth.signBulkRead,
            spreadClients: true,
            floor: 'same verification' as const,
          },
        ]
      : []),
    { name: '`/health`', comparator: 'hello', goal: 0.6, path: '/health' },
  ];
}

/**
 * A numeric BENCH_ setting: a value that is not a number, is below `least`, or (for counts)
 * is not whole stops the bench before any row, rather than a slice count of 0 printing a
 * rate of 0 and a p99 of -Infinity as if measured. A blank value is not a number (`Number`
 * would read it as 0: `BENCH_SETTLE_SECONDS=` would silently mean no settling).
 */
function setting(name: string, fallback: number, least: number, whole = false): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value) || value < least || (whole && !Number.isInteger(value))) {
    throw new Error(`${name} must be ${whole ? 'a whole number' : 'a number'} ≥ ${least}`);
  }
  return value;
}

const SECONDS = setting('BENCH_SECONDS', 5, 0.1);
/**
 * A row's SECONDS are measured in this many slices a side, Haven's alternating with its
 * comparator's (see alternate); each slice is loaded SETTLE_SECONDS longer than it counts.
 */
const SLICES = setting('BENCH_SLICES', 5, 1, true);
const SETTLE_SECONDS = setting('BENCH_SETTLE_SECONDS', 0.5, 0);
/**
 * Each side is loaded this long before it is measured. Haven's per-request CPU keeps falling
 * for several seconds of load (JIT tiers, heap sizing): with 1 s, the children read's first
 * figure was below its second, taken after more load with 100 times the data, in every one
 * of ten runs (by 4-58 %); with 5 s it fell either side (0.80-1.08 in four runs), as noise
 * does. The comparators get the same warm-up.
 */
const WARMUP_SECONDS = setting('BENCH_WARMUP_SECONDS', 5, 0.1);
/** As the goals were set (docs/decisions.md "Comparators and floors"). */
const CONNECTIONS = setting('BENCH_CONNECTIONS', 50, 1, true);
/** The soak keeps its own default: its figures are RSS, not rates. */
const SOAK_CONNECTIONS = setting('BENCH_CONNECTIONS', 10, 1, true);
/** Families stored for the children read's first figure, then for its second. */
const FAMILIES_BEFORE = 1_000;
const FAMILIES_AFTER = 100_000;
/**
 * Seconds the idle Haven is left alone after starting (longer than PostgreSQL's ~10 s
 * statistics lag for idle backends, so startup's transactions are counted before the first
 * reading), then measured (bench/idle-load.ts).
 */
const IDLE_SETTLE_SECONDS = 12;
const IDLE_SECONDS = setting('BENCH_IDLE_SECONDS', 30, 1);
const IDLE_GOAL = 1;
/** connectPostgres's pool (src/db/connect.ts): the `pg` comparator gets as many connections. */
const HAVEN_POOL_SIZE = 10;
const BENCH_DATABASE = 'haven_bench';
/**
 * How each Haven instance is started. BENCH_HAVEN_NODE_ARGS adds node flags (space
 * separated) to them alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile Haven
 * under the rows' load: NODE_OPTIONS does not take --cpu-prof, and would reach the load
 * generator and the comparators too.
 */
const HAVEN = [
  ...(process.env.BENCH_HAVEN_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
  'dist/main.js',
];
/**
 * BENCH_COMPARATOR_NODE_ARGS does the same for the comparators a row starts (not the bare
 * hello, which is started once): a profile of each side under the same load is how a gap
 * between them is read function by function.
 */
const COMPARATOR_NODE_ARGS =
  process.env.BENCH_COMPARATOR_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
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

/**
 * Starts `node args` and waits until its /health answers: with a 2xx, or with anything for a
 * comparator (whose answer may be the 304 of its row).
 */
async function startServer(
  args: string[],
  env: Record<string, string>,
  fixedPort?: number,
  anyAnswer = false,
) {
  const port = fixedPort ?? (await freePort());
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/health`);
      await answer.arrayBuffer();
      if (anyAnswer || answer.ok) {
        return { child, pid: child.pid, url: `http://127.0.0.1:${port}` };
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
  /**
   * Responses other than 2xx, by class ("3xx 1234"), and requests that got no answer
   * ("errors 3", timeouts among them): a 304 row expects only 3xx.
   */
  non2xx: string;
  /** 5xx answers and failed requests: none is expected from a comparator. */
  failures: number;
  /** 4xx and 5xx answers and failed requests: no row expects any from Haven. */
  refused: number;
  /**
   * The server process's CPU time (user + system, from /proc) per answered request, in µs:
   * what the server itself spends, apart from the load generator sharing the machine.
   * Undefined where /proc is not there.
   */
  cpuMicros?: number;
  /**
   * The same for the process's main thread alone (JavaScript's thread): what is left of
   * cpuMicros once libuv's pool (Ed25519 verification, file writes) and V8's GC threads are
   * taken out. The rate of a CPU-bound Node server is bounded by this thread.
   */
  mainThreadCpuMicros?: number;
}

/**
 * A server process's CPU seconds so far (utime + stime), or undefined without /proc; with
 * `mainThread`, those of its main thread alone (its task id is the process id).
 */
function cpuSeconds(pid: number, mainThread = false): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th
    // and 13th, in clock ticks (100 a second on Linux).
    const stat = readFileSync(
      mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`,
      'utf8',
    );
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
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

/** What one stretch of load on one server measured: combined into Figures by `figures`. */
interface Slice {
  /** Responses counted (after the settle), and the seconds they were counted over. */
  answered: number;
  seconds: number;
  /** The server's CPU seconds (all threads, then the main thread) over the same window. */
  cpu?: number;
  mainCpu?: number;
  p50: number;
  p99: number;
  /** Over the whole stretch, settle included: answers by class, and requests not answered. */
  classes: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'errors', number>;
}

/** A server's clock and CPU seconds now (CPU undefined without /proc or a pid). */
function reading(pid: number | undefined) {
  return {
    at: performance.now(),
    cpu: pid === undefined ? undefined : cpuSeconds(pid),
    mainCpu: pid === undefined ? undefined : cpuSeconds(pid, true),
  };
}

/**
 * Loads `server` with `row` for `settle + duration` seconds and counts only the responses
 * (and the CPU) after the first `settle` seconds: every connection is busy by then, so a
 * stretch's first answers, which arrive a latency late, do not make a slow server's short
 * slice look slower than its steady rate.
 */
function load(
  server: { url: string; pid?: number },
  row: Row,
  duration = SECONDS,
  settle = 0,
): Promise<Slice> {
  let counting = settle === 0;
  let answered = 0;
  let from = reading(server.pid);
  const started = new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${server.url}${row.path}`,
        method: row.method ?? 'GET',
        headers: row.headers,
        body: row.body,
        connections: CONNECTIONS,
        duration: settle + duration,
        ...(row.spreadClients ? spreadOverClients() : {}),
        ...(row.rotate ? rotateHeader(row.rotate) : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('response', () => {
      if (counting) {
        answered++;
      }
    });
  });
  const settled =
    settle > 0
      ? setTimeout(() => {
          counting = true;
          from = reading(server.pid);
        }, settle * 1000)
      : undefined;
  return started.then((result) => {
    clearTimeout(settled);
    const to = reading(server.pid);
    const spent = (before?: number, after?: number) =>
      before === undefined || after === undefined ? undefined : after - before;
    return {
      answered,
      seconds: (to.at - from.at) / 1000,
      cpu: spent(from.cpu, to.cpu),
      mainCpu: spent(from.mainCpu, to.mainCpu),
      p50: result.latency.p50,
      p99: result.latency.p99,
      classes: {
        '1xx': result['1xx'],
        '2xx': result['2xx'],
        '3xx': result['3xx'],
        '4xx': result['4xx'],
        '5xx': result['5xx'],
        errors: result.errors,
      },
    };
  });
}

/**
 * One server's figures over its slices: the rate and the CPU a request over all of them
 * together, the median slice's p50 and the worst slice's p99.
 */
function figures(slices: Slice[]): Figures {
  const sum = (pick: (slice: Slice) => number | undefined) => {
    let total = 0;
    for (const slice of slices) {
      const value = pick(slice);
      if (value === undefined) {
        return undefined;
      }
      total += value;
    }
    return total;
  };
  const answered = sum((slice) => slice.answered) ?? 0;
  const seconds = sum((slice) => slice.seconds) ?? 0;
  const perRequest = (total: number | undefined) =>
    total === undefined || answered === 0 ? undefined : (total * 1e6) / answered;
  const p50s = slices.map((slice) => slice.p50).sort((a, b) => a - b);
  const classes = (kind: keyof Slice['classes']) => sum((slice) => slice.classes[kind]) ?? 0;
  return {
    cpuMicros: perRequest(sum((slice) => slice.cpu)),
    mainThreadCpuMicros: perRequest(sum((slice) => slice.mainCpu)),
    rps: seconds > 0 ? answered / seconds : 0,
    p50: p50s[Math.floor((p50s.length - 1) / 2)] ?? 0,
    p99: Math.max(...slices.map((slice) => slice.p99)),
    failures: classes('5xx') + classes('errors'),
    refused: classes('4xx') + classes('5xx') + classes('errors'),
    non2xx:
      (['1xx', '3xx', '4xx', '5xx', 'errors'] as const)
        .filter((kind) => classes(kind) > 0)
        .map((kind) => `${kind} ${classes(kind)}`)
        .join(', ') || '0',
  };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

if (process.argv.includes('--audit-cost')) {
  const { auditCostBench } = await import('./audit-cost.js');
  process.stdout.write(`${(await auditCostBench()).join('\n')}\n`);
  process.exit(0);
}
if (process.argv.includes('--telemetry-cost')) {
  const { telemetryCostBench } = await import('./telemetry-cost.js');
  process.stdout.write(`${(await telemetryCostBench()).join('\n')}\n`);
  process.exit(0);
}
if (process.argv.includes('--age-run')) {
  const { ageRunBench } = await import('./age-run.js');
  process.stdout.write(`${(await ageRunBench()).join('\n')}\n`);
  process.exit(0);
}
const dataDir = mkdtempSync(join(tmpdir(), 'haven-bench-'));
const havenPort = await freePort();
const auth = await seed({ dataDir }, `http://127.0.0.1:${havenPort}`);
const soakFor = soakSeconds(process.argv);
if (soakFor !== undefined) {
  const server = await startServer(
    HAVEN,
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
      SOAK_CONNECTIONS,
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
const postgresUrl = await freshPostgres(postgresAdminUrl, BENCH_DATABASE);
const postgresPort = await freePort();
const postgresAuth = postgresUrl
  ? await seed({ databaseUrl: postgresUrl, dataDir }, `http://127.0.0.1:${postgresPort}`)
  : undefined;
if (postgresUrl && postgresAuth) {
  // Before Haven starts, so neither the idle figure nor a row sees it happening.
  await storeFamilies(postgresUrl, FAMILIES_BEFORE, postgresAuth.orgId);
}
const responsesDir = mkdtempSync(join(tmpdir(), 'haven-bench-responses-'));
const bare = await startServer(['bench/bare-server.mjs'], {});
const haven = await startServer(
  HAVEN,
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
// The embedded quick setup's floor (bench/embedded-write-server.mjs) writes into a copy too.
const floorDataDir = `${dataDir}-floor`;
cpSync(dataDir, floorDataDir, { recursive: true, filter: (path) => !path.endsWith('haven.lock') });
const havenRedis = (await redisAnswers(redisUrl))
  ? await startServer(HAVEN, {
      DATA_DIR: redisDataDir,
      REDIS_URL: redisUrl,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    })
  : undefined;
const havenPostgres = postgresUrl
  ? await startServer(
      HAVEN,
      {
        DATABASE_URL: postgresUrl,
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        TRUST_PROXY: 'true',
      },
      postgresPort,
    )
  : undefined;

interface Target {
  /** Shown after a row's name; none for the main backend. */
  label: string;
  server: { url: string; pid?: number };
  auth: Credentials;
  /** The target's PostgreSQL database, for the `pg` comparator. */
  databaseUrl?: string;
}

const embedded: Target = { label: ' [PGlite]', server: haven, auth };
const primary: Target =
  havenPostgres && postgresAuth && postgresUrl
    ? { label: '', server: havenPostgres, auth: postgresAuth, databaseUrl: postgresUrl }
    : { ...embedded, label: '' };
const withRedis: Target | undefined = havenRedis
  ? { label: ' [Redis buckets]', server: havenRedis, auth }
  : undefined;

/** What Haven answered to one request of `row`: the bytes a `same bytes` comparator sends. */
async function capturedResponse(url: string, row: Row) {
  const answer = await fetch(`${url}${row.path}`, {
    method: row.method ?? 'GET',
    headers: { ...row.headers, 'accept-encoding': 'identity' },
    body: row.body,
  });
  return {
    status: answer.status,
    contentType: answer.headers.get('content-type'),
    bodyBase64: Buffer.from(await answer.arrayBuffer()).toString('base64'),
  };
}

let responses = 0;

/** The row's comparator, started for it (or the shared hello); undefined when it cannot run. */
async function startComparator(target: Target, row: Row) {
  if (row.comparator === 'hello') {
    return { url: bare.url, pid: bare.pid, stop: async () => {} };
  }
  if (
    (row.comparator === 'same SQL' && !target.databaseUrl) ||
    (row.comparator === 'same verification' && !row.verifier)
  ) {
    return undefined;
  }
  const responseFile = join(responsesDir, `${++responses}.json`);
  writeFileSync(responseFile, JSON.stringify(await capturedResponse(target.server.url, row)));
  const env: Record<string, string> = { BENCH_RESPONSE_FILE: responseFile };
  if (row.comparator === 'same verification' && row.verifier) {
    env.BENCH_VERIFY_PUBLIC_KEY = row.verifier.publicKey;
    env.BENCH_VERIFY_TARGET_URI = row.verifier.targetUri;
  }
  if (row.comparator === 'same write') {
    const { statement, freshIds } = await quickSetupStatement(
      target.auth.orgId,
      QUICK_SETUP_CHILD,
      QUICK_SETUP_BIRTH_DATE,
    );
    env.BENCH_STATEMENTS = JSON.stringify([statement]);
    env.BENCH_FRESH_IDS = JSON.stringify(freshIds);
    env.BENCH_DATA_DIR = floorDataDir;
  }
  if (row.comparator === 'same SQL' && target.databaseUrl) {
    const tenant = { kind: 'org' as const, orgId: target.auth.orgId, environment: 'test' as const };
    env.BENCH_STATEMENTS = JSON.stringify(
      await childrenReadStatements(target.auth.familyId, tenant),
    );
    env.DATABASE_URL = target.databaseUrl;
    env.BENCH_POOL_SIZE = String(HAVEN_POOL_SIZE);
  }
  const server = await startServer(
    [
      ...COMPARATOR_NODE_ARGS,
      row.comparator === 'same write'
        ? 'bench/embedded-write-server.mjs'
        : row.comparator === 'same SQL' && FRAMEWORK_BASELINE
          ? 'bench/fastify-same-sql-server.mjs'
          : 'bench/same-bytes-server.mjs',
    ],
    env,
    undefined,
    true,
  );
  return { url: server.url, pid: server.pid, stop: () => stop(server.child) };
}

/**
 * A row rotating over many keys first sends one request with each, so that its figure is
 * the steady state (every key seen once, as a fleet polling each minute keeps them within
 * the key cache's 60 s) rather than how fast thousands of cold keys load: on PGlite each load
 * runs in the server's own thread, and the 1 s warm-up reaches only some of them.
 */
async function touchEveryKey(url: string, row: Row): Promise<void> {
  if (!row.rotate) {
    return;
  }
  await autocannon({
    url: `${url}${row.path}`,
    headers: row.headers,
    connections: CONNECTIONS,
    amount: row.rotate.values.length,
    ...rotateHeader(row.rotate),
  });
}

/**
 * Haven and its comparator (if any) in turn, SLICES times each: a machine whose speed drifts
 * within a row (a shared VM's neighbours) moves both sides alike, where one stretch each put
 * the drift between them.
 */
async function alternate(
  haven: { url: string; pid?: number },
  comparator: { url: string; pid?: number } | undefined,
  row: Row,
): Promise<{ haven: Figures; comparator?: Figures }> {
  const havenSlices: Slice[] = [];
  const comparatorSlices: Slice[] = [];
  for (let slice = 0; slice < SLICES; slice++) {
    if (comparator) {
      comparatorSlices.push(await load(comparator, row, SECONDS / SLICES, SETTLE_SECONDS));
    }
    havenSlices.push(await load(haven, row, SECONDS / SLICES, SETTLE_SECONDS));
  }
  return {
    haven: figures(havenSlices),
    comparator: comparator ? figures(comparatorSlices) : undefined,
  };
}

/** The row with its request signed now, if it is signed (a signature ages). */
async function signedNow(row: Row): Promise<Row> {
  return row.sign ? { ...row, ...(await row.sign()) } : row;
}

/** Warms both (JIT, caches), then measures them in alternating slices. */
async function measure(target: Target, unsigned: Row) {
  const row = await signedNow(unsigned);
  const comparator = await startComparator(target, row);
  try {
    if (comparator) {
      await load(comparator, row, WARMUP_SECONDS);
    }
    await touchEveryKey(target.server.url, row);
    await load(target.server, row, WARMUP_SECONDS);
    const measured = await alternate(target.server, comparator, row);
    if (measured.comparator?.failures) {
      throw new Error(
        `the comparator of "${row.name}" failed ${measured.comparator.failures} requests`,
      );
    }
    return measured;
  } finally {
    await comparator?.stop();
  }
}

/**
 * A row's floor (`Row.floor`): that comparator in Haven's place, against the bare hello,
 * warmed and measured in alternating slices as Haven is.
 */
async function measureFloor(target: Target, unsigned: Row) {
  if (!unsigned.floor) {
    return undefined;
  }
  const row = { ...(await signedNow(unsigned)), comparator: unsigned.floor };
  const floor = await startComparator(target, row);
  if (!floor) {
    return undefined;
  }
  try {
    await load(bare, row, WARMUP_SECONDS);
    await load(floor, row, WARMUP_SECONDS);
    const measured = await alternate(floor, bare, row);
    if (measured.haven.refused > 0) {
      throw new Error(`the floor of "${row.name}" refused or failed requests`);
    }
    return measured;
  } finally {
    await floor.stop();
  }
}

/**
 * Cut, not rounded (0.0296 prints 0.029, 0.795 prints 0.79): a ratio rounded up to its goal
 * would read as met where the `met` column says it is not.
 */
function ratioText(ratio: number): string {
  const digits = ratio < 0.1 ? 3 : 2;
  // The epsilon keeps binary fractions whole: 0.29 * 100 is 28.999999999999996.
  return (Math.floor(ratio * 10 ** digits + 1e-9) / 10 ** digits).toFixed(digits);
}

const micros = (figure: number | undefined) =>
  figure === undefined ? '—' : figure.toFixed(figure < 10 ? 1 : 0);

function tableLine(
  name: string,
  haven: Figures,
  comparatorName: string,
  comparator: Figures | undefined,
  goal: number | undefined,
): string {
  const ratio = comparator?.rps ? haven.rps / comparator.rps : undefined;
  const cells = [
    name,
    Math.round(haven.rps),
    comparatorName,
    comparator === undefined ? '—' : Math.round(comparator.rps),
    ratio === undefined ? '—' : ratioText(ratio),
    goal === undefined ? '—' : `≥ ${goal}`,
    goal === undefined || ratio === undefined
      ? '—'
      : haven.refused > 0
        ? 'no (errors)'
        : ratio >= goal
          ? 'yes'
          : 'no',
    haven.p50,
    haven.p99,
    haven.non2xx,
    micros(haven.cpuMicros),
    micros(haven.mainThreadCpuMicros),
    micros(comparator?.cpuMicros),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** The `--only` texts given, lower-cased; none means every row. */
function onlyRows(argv: string[]): string[] {
  return argv.flatMap((arg, at) =>
    arg === '--only' && argv[at + 1] ? [(argv[at + 1] as string).toLowerCase()] : [],
  );
}
const only = onlyRows(process.argv);
const chosen = (name: string) =>
  only.length === 0 || only.some((text) => name.toLowerCase().includes(text));

const thousands = (n: number) => n.toLocaleString('en-US').replaceAll(',', ' ');

try {
  const notes: string[] = [];
  const table = [
    '| path | Haven req/s | comparator | comparator req/s | ratio | goal | met | Haven p50 ms | Haven p99 ms | non-2xx | Haven CPU µs/req | Haven main thread µs/req | comparator CPU µs/req |',
    '|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  // First, while nothing but its own startup has touched this Haven.
  let idle: number | undefined;
  if (!primary.databaseUrl) {
    notes.push(
      `(no PostgreSQL at ${postgresAdminUrl}: every row on PGlite; the \`pg\` comparator, the ${thousands(FAMILIES_AFTER)}-family row and the idle load skipped)`,
    );
  } else if (chosen('idle database load')) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_SECONDS * 1000));
    idle = await idleTransactionsPerSecond(postgresAdminUrl, BENCH_DATABASE, IDLE_SECONDS);
  }
  if (!withRedis) {
    notes.push(`(no Redis at ${redisUrl}: Redis rows skipped)`);
  }
  if (chosen('startup collection')) {
    notes.push(startupMapsNote(await probeStartupMaps()));
  }
  const embeddedRows = new Map(rows(embedded.auth).map((row) => [row.name, row]));
  /** Measures `row`'s floor on `target` and adds its line (none when it cannot run). */
  const measureFloorLine = async (target: Target, row: Row) => {
    const floor = await measureFloor(target, row);
    if (floor && row.floor) {
      table.push(
        tableLine(
          `${row.name}${target.label}: its floor (${COMPARATOR_NAMES[row.floor]}, in Haven's place)`,
          floor.haven,
          COMPARATOR_NAMES[row.comparator],
          floor.comparator,
          undefined,
        ),
      );
    }
  };
  for (const row of rows(primary.auth).filter((row) => chosen(row.name))) {
    const first = await measure(primary, row);
    table.push(
      tableLine(
        row.name,
        first.haven,
        COMPARATOR_NAMES[row.comparator],
        first.comparator,
        row.goal,
      ),
    );
    if (row.floor === 'same verification') {
      await measureFloorLine(primary, row);
    }
    if (row.againWithFamilies && primary.databaseUrl) {
      await storeFamilies(primary.databaseUrl, row.againWithFamilies, primary.auth.orgId);
      await load(primary.server, row, WARMUP_SECONDS);
      const { haven: again } = await alternate(primary.server, undefined, row);
      table.push(
        tableLine(
          `${row.name}, ${thousands(row.againWithFamilies)} families stored`,
          again,
          `itself, ${thousands(FAMILIES_BEFORE)} families`,
          first.haven,
          // "Within 15 %" of the first figure.
          0.85,
        ),
      );
    }
    const embeddedRow = embeddedRows.get(row.name);
    if (row.embedded && primary.databaseUrl && embeddedRow) {
      const measured = await measure(embedded, embeddedRow);
      table.push(
        tableLine(
          `${row.name}${embedded.label}`,
          measured.haven,
          COMPARATOR_NAMES[row.comparator],
          measured.comparator,
          row.goal,
        ),
      );
    }
    if (row.floor === 'same write' && embeddedRow) {
      // The embedded database's floor: after the row's [PGlite] figure (or its only one).
      await measureFloorLine(embedded, embeddedRow);
    }
    if (row.metered && withRedis && embeddedRow) {
      const measured = await measure(withRedis, embeddedRow);
      table.push(
        tableLine(
          `${row.name}${withRedis.label}`,
          measured.haven,
          COMPARATOR_NAMES[row.comparator],
          measured.comparator,
          undefined,
        ),
      );
    }
  }
  if (idle !== undefined) {
    table.push(
      `| idle database load, workers inline | ${idle.toFixed(1)} transactions/s | — | — | — | ≤ ${IDLE_GOAL} /s | ${idle <= IDLE_GOAL ? 'yes' : 'no'} | | | | | | |`,
    );
  }
  const lines = [
    `Haven bench: ${CONNECTIONS} connections, ${SECONDS} s per row, ${primary.databaseUrl ? 'PostgreSQL' : 'PGlite'} unless marked, node ${process.version}`,
    ...notes,
    '',
    ...table,
  ];
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
  rmSync(floorDataDir, { recursive: true, force: true });
  rmSync(responsesDir, { recursive: true, force: true });
}
