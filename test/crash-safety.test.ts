// Crash safety and graceful shutdown (docs/decisions.md "Durability of acknowledged writes",
// "Graceful stop drains first"): the real server under concurrent writes of
// every kind (families, quick setups, API keys, MCP tokens, device registrations, writes
// under an Idempotency-Key; see acknowledged-writes.ts).
// - kill -9 mid-stream: after a restart on the same storage, every write that was
//   acknowledged (2xx) is there: families and children are served, keys and MCP tokens
//   authenticate, device keys read their policy, receipts replay without a second write.
// - SIGTERM mid-stream: every request the server carried out is answered (2xx; 503 for one
//   that arrived while closing), nothing lands unacknowledged, the counters buffered in memory
//   (key usage and last use, MCP token last use, device and sandbox-session last seen) are
//   written, the enforcement queued last is not lost, and the process exits 0.
// On embedded storage (a DATA_DIR on disk) and, when DATABASE_URL is set, on PostgreSQL.
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../src/db/storage.js';
import {
  addressOf,
  call,
  checkAddress,
  KINDS,
  landedUnacknowledged,
  newDeveloper,
  newWriter,
  type Outcome,
  summaryOf,
  type Tally,
  verifyAcknowledged,
  type Writer,
  writeUntil,
} from './acknowledged-writes.js';
import { createTestDatabase, newDataDir, type TestDatabase } from './database.js';
import { killHard, type RunningScript, type RunningServer, startServer } from './server-process.js';
import { eventually } from './tcp-proxy.js';

const PROCESS_TIMEOUT_MS = 240_000;
const WRITERS = 8;
/** kill -9 once this many writes are acknowledged (about ten of each kind). */
const KILL_AFTER = 60;
/** The last moment before SIGTERM starts once this many writes are acknowledged. */
const TERM_AFTER = 40;
/** API-key requests sent in the last moment before SIGTERM (usage flushes every 5 s). */
const KEYED_REQUESTS = 12;
/** Those and the one before them that lines the test up with the flush timer. */
const KEYED_TOTAL = KEYED_REQUESTS + 1;

async function newWriters(url: string, run: string, phase: number): Promise<Writer[]> {
  return Promise.all(Array.from({ length: WRITERS }, (_, i) => newWriter(url, run, phase, i)));
}

/** The server's own account of itself, for a failure message. */
function outputOf(server: RunningScript): string {
  return `server output:\n${server.output.stdout.slice(-4000)}\n${server.output.stderr.slice(-4000)}`;
}

function exited(server: RunningScript): boolean {
  return server.child.exitCode !== null || server.child.signalCode !== null;
}

/**
 * A load balancer's view: /health polled back to back from before SIGTERM until the process
 * is gone. Each answer is kept (a refused connection, once the port is closed, is not one).
 */
function pollHealth(url: string, server: RunningScript) {
  const answers: Array<{ status: number; body: string }> = [];
  const polling = (async () => {
    while (!exited(server)) {
      try {
        const response = await fetch(`${url}/health`);
        answers.push({ status: response.status, body: await response.text() });
      } catch {
        // Closed port or connection: the drain is over.
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return { answers, done: () => polling };
}

/**
 * A request the server has taken in (it answered `100 Continue`, so the request reached the
 * app and counts as in flight) whose body is held back: the drain must wait for it, which
 * keeps the instance draining long enough to be seen doing so. finish() sends the rest and
 * resolves with the answer's status line.
 */
async function holdRequestOpen(url: string) {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ name: 'held across SIGTERM' });
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk) => {
    received += String(chunk);
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(
    `POST /api/v1/families HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
      `content-type: application/json\r\ncontent-length: ${body.length}\r\n` +
      `x-sandbox-session: held-${checkAddress()}\r\nx-forwarded-for: ${checkAddress()}\r\n` +
      'expect: 100-continue\r\n\r\n',
  );
  await eventually(async () => received.includes('100 Continue'), 'the server to take the request');
  return {
    async finish(): Promise<string> {
      // Written, not ended: Node's server treats a client's half-close as the request being
      // abandoned (it does not allow half-open sockets) and would drop the answer.
      socket.write(body);
      const finalStatus = () =>
        received.split('\r\n').find((line) => /^HTTP\/1\.1 [2-5]/.test(line));
      await eventually(async () => finalStatus() !== undefined, 'the held request to be answered');
      // Answers sent while draining say `Connection: close`: the server closes this socket.
      await closed;
      return finalStatus() as string;
    },
  };
}

/** Log lines at error level or above (pino: 50 error, 60 fatal). */
function errorLines(server: RunningScript): string[] {
  return server.output.stdout.split('\n').filter((line) => /"level":(5|6)\d/.test(line));
}

function unacknowledgedCount(outcomes: Outcome[]): number {
  return outcomes.filter((o) => o.kind !== 'acknowledged').length;
}

function expectNothingLost(tally: Tally) {
  for (const kind of KINDS) {
    // Every kind was written, or the run proves nothing about it.
    expect(tally[kind].acknowledged, `acknowledged ${kind}`).toBeGreaterThan(0);
  }
  expect(KINDS.flatMap((kind) => tally[kind].lost)).toEqual([]);
}

/**
 * What has counters buffered at the moment of SIGTERM: a developer with an org, an API key
 * and an MCP token; an anonymous sandbox session with a child, a connected platform and a
 * device.
 */
async function newMeter(url: string, run: string) {
  const ip = addressOf(3, 0);
  const developer = await newDeveloper(url, ip, `${run}-meter`);
  const key = await call<{ id: string; key: string }>(
    url,
    'POST',
    `/api/v1/developers/orgs/${developer.orgId}/keys`,
    developer.session,
    { name: 'metered', environment: 'test' },
    201,
  );
  const token = await call<{ token: { id: string }; plain: string }>(
    url,
    'POST',
    '/api/v1/mcp/tokens',
    developer.session,
    { family_id: developer.familyId, label: 'metered' },
    201,
  );
  const sandboxSession = `crash-${run}-meter-${ip}`;
  const anonymous = { 'x-forwarded-for': ip, 'x-sandbox-session': sandboxSession };
  const setup = await call<{ family: { id: string }; child: { id: string } }>(
    url,
    'POST',
    '/api/v1/setup/quick',
    anonymous,
    { child_name: 'Meter', birth_date: '2014-02-03', family_name: 'meter' },
    201,
  );
  await call(
    url,
    'POST',
    `/api/v1/families/${setup.family.id}/connections`,
    anonymous,
    { platform_id: 'nextdns' },
    201,
  );
  const device = await call<{ device: { id: string }; device_key: string }>(
    url,
    'POST',
    `/api/v1/children/${setup.child.id}/devices`,
    anonymous,
    { device_name: 'meter phone' },
    201,
  );
  return {
    ip,
    ...developer,
    key: { id: key.id, secret: key.key },
    token: { id: token.token.id, plain: token.plain },
    sandboxSession,
    anonymous,
    childId: setup.child.id,
    device: { id: device.device.id, key: device.device_key },
  };
}

type Meter = Awaited<ReturnType<typeof newMeter>>;

type Row = Record<string, unknown> & { id: string };

/** The meter key's usage as the database has it, added up over its hourly rows. */
async function usageOf(url: string, meter: Meter) {
  const rows = await call<Array<{ total_requests: number; status_2xx: number }>>(
    url,
    'GET',
    `/api/v1/developers/orgs/${meter.orgId}/usage?key_id=${meter.key.id}`,
    meter.session,
    undefined,
    200,
  );
  return {
    total: rows.reduce((sum, row) => sum + row.total_requests, 0),
    ok: rows.reduce((sum, row) => sum + row.status_2xx, 0),
  };
}

/**
 * The buffered counters of the meter as the database has them, read through the API: the
 * key's usage and last use, the MCP token's last use, the device's last poll. Times are epoch
 * milliseconds, NaN when never stamped.
 */
async function storedCounters(url: string, meter: Meter) {
  const get = (path: string, headers: Record<string, string>) =>
    call<Row[]>(url, 'GET', path, headers, undefined, 200);
  const [usage, keys, tokens, devices] = await Promise.all([
    usageOf(url, meter),
    get(`/api/v1/developers/orgs/${meter.orgId}/keys`, meter.session),
    get('/api/v1/mcp/tokens', meter.session),
    get(`/api/v1/children/${meter.childId}/devices`, meter.anonymous),
  ]);
  const at = (rows: Row[], id: string, field: string) =>
    Date.parse(String(rows.find((row) => row.id === id)?.[field] ?? ''));
  return {
    usage,
    keyUsedAt: at(keys, meter.key.id, 'last_used_at'),
    keyUsedFrom: keys.find((key) => key.id === meter.key.id)?.last_used_ip,
    tokenUsedAt: at(tokens, meter.token.id, 'last_used_at'),
    deviceSeenAt: at(devices, meter.device.id, 'last_seen_at'),
  };
}

/** One request with the meter's API key; resolves with its status. */
async function keyedRequest(url: string, meter: Meter): Promise<number> {
  const response = await fetch(`${url}/api/v1/developer/families`, {
    headers: { authorization: `Bearer ${meter.key.secret}`, 'x-forwarded-for': meter.ip },
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * The last moment before SIGTERM. First, lined up with the usage flush timer (every 5 s): one
 * keyed request, then a wait until the timer has written it. Then at once, all together: an
 * enforcement queued, KEYED_REQUESTS API-key requests, the MCP token used, the device
 * polling; a look at what the database has of them; SIGTERM.
 */
async function lastMomentThenTerminate(
  url: string,
  meter: Meter,
  server: RunningScript,
  health: ReturnType<typeof pollHealth>,
) {
  const warmUp = await keyedRequest(url, meter);
  // Polled gently: these reads count against the meter user's rate limit (100 a minute).
  const deadline = Date.now() + 10_000;
  while ((await usageOf(url, meter)).total === 0) {
    if (Date.now() > deadline) {
      throw new Error('the usage flush timer did not write a keyed request within 10 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const from = Date.now();
  const [job, keyed] = await Promise.all([
    call<{ id: string }>(
      url,
      'POST',
      `/api/v1/children/${meter.childId}/enforce`,
      meter.anonymous,
      {},
      202,
    ),
    Promise.all(Array.from({ length: KEYED_REQUESTS }, () => keyedRequest(url, meter))),
    call(
      url,
      'GET',
      `/api/v1/families/${meter.familyId}`,
      { authorization: `Bearer ${meter.token.plain}`, 'x-forwarded-for': meter.ip },
      undefined,
      200,
    ),
    call(url, 'GET', '/api/v1/device/policy', { 'x-device-key': meter.device.key }, undefined, 200),
  ]);
  // What the database has of it (the rest is only in the server's memory).
  const stored = await storedCounters(url, meter);
  const held = await holdRequestOpen(url);
  const terminatedAt = Date.now();
  server.child.kill('SIGTERM');
  // Draining now, until the held request is answered: the health poller must see it.
  await eventually(
    async () => health.answers.filter((a) => a.status === 503).length >= 3,
    '/health to answer 503 while draining',
  );
  const heldAnswer = await held.finish();
  return { from, jobId: job.id, keyed: [warmUp, ...keyed], stored, terminatedAt, heldAnswer };
}

/** Read straight from the storage a stopped server left: the sandbox session's last use. */
async function sandboxSessionLastSeen(env: Record<string, string>, name: string): Promise<Date> {
  const storage = await openStorage(
    { databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR ?? 'memory' },
    { migrate: false },
  );
  try {
    const row = await storage.database.db
      .selectFrom('sandbox_sessions')
      .select('last_seen_at')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return new Date(row.last_seen_at);
  } finally {
    await storage.close();
  }
}

const TERMINAL = ['completed', 'failed', 'partial'];

const backends = [
  { name: 'embedded storage', label: 'PGlite', postgres: false },
  { name: 'PostgreSQL', label: 'PostgreSQL', postgres: true },
].filter((backend) => backend.postgres === Boolean(process.env.DATABASE_URL));

for (const backend of backends) {
  describe(`the server under concurrent writes (${backend.name})`, () => {
    let dataDir = '';
    let database: TestDatabase | undefined;
    let env: Record<string, string> = {};

    beforeAll(async () => {
      if (backend.postgres) {
        database = await createTestDatabase();
        env = { DATABASE_URL: database.url as string, TRUST_PROXY: 'true' };
        if (process.env.REDIS_URL) {
          env.REDIS_URL = process.env.REDIS_URL;
        }
      } else {
        dataDir = newDataDir('crash');
        env = { DATA_DIR: dataDir, TRUST_PROXY: 'true' };
      }
    });
    afterAll(async () => {
      await database?.drop();
      if (dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it(
      'keeps every acknowledged write of every kind across kill -9',
      async () => {
        const server = await startServer(env);
        let restarted: RunningServer | undefined;
        try {
          const writers = await newWriters(server.url, 'kill', 1);
          // Killed once KILL_AFTER writes are acknowledged, while every writer still has one
          // in flight.
          let acknowledged = 0;
          let killing: Promise<void> | undefined;
          const outcomes = await writeUntil(
            server.url,
            writers,
            () => killing !== undefined && exited(server),
            (outcome) => {
              if (outcome.kind === 'acknowledged' && ++acknowledged === KILL_AFTER) {
                killing = killHard(server);
              }
            },
          );
          expect(
            killing,
            `only ${acknowledged} writes acknowledged; ${outputOf(server)}`,
          ).toBeDefined();
          await killing;

          restarted = await startServer(env);
          const tally = await verifyAcknowledged(restarted.url, writers, outcomes);
          console.log(
            `crash-safety ${backend.label}: ${summaryOf(tally)} (kill -9 under ${WRITERS} writers; ${unacknowledgedCount(outcomes)} requests unacknowledged)`,
          );
          expectNothingLost(tally);
        } finally {
          await killHard(server);
          if (restarted) {
            await killHard(restarted);
          }
        }
      },
      PROCESS_TIMEOUT_MS,
    );

    it(
      'on SIGTERM answers every accepted request, refuses new ones, flushes buffered counters and queued jobs, and exits 0',
      async () => {
        const server = await startServer(env);
        let restarted: RunningServer | undefined;
        try {
          const writers = await newWriters(server.url, 'term', 2);
          const meter = await newMeter(server.url, 'term');
          const health = pollHealth(server.url, server);
          let acknowledged = 0;
          let terminating: ReturnType<typeof lastMomentThenTerminate> | undefined;
          const outcomes = await writeUntil(
            server.url,
            writers,
            () => terminating !== undefined && exited(server),
            (outcome) => {
              if (outcome.kind === 'acknowledged' && ++acknowledged === TERM_AFTER) {
                terminating = lastMomentThenTerminate(server.url, meter, server, health);
                // A failure there must not leave the server running: writers stop on exit.
                terminating.catch(() => server.child.kill('SIGKILL'));
              }
            },
          );
          expect(
            terminating,
            `only ${acknowledged} writes acknowledged; ${outputOf(server)}`,
          ).toBeDefined();
          const last = await (terminating as ReturnType<typeof lastMomentThenTerminate>);
          expect(await server.exited, outputOf(server)).toBe(0);
          const stoppedWithin = Date.now() - last.terminatedAt;
          expect(stoppedWithin).toBeLessThan(15_000);
          expect(server.output.stdout).toContain('"msg":"stopped"');
          // /health said ok, then draining in its documented shape; never a 500, and the
          // stop logged nothing at error level.
          await health.done();
          const shapes = health.answers.map(
            ({ status, body }) => `${status} ${JSON.parse(body).status}`,
          );
          expect(shapes.length).toBeGreaterThan(0);
          expect(new Set(shapes)).toSatisfy((seen: Set<string>) =>
            [...seen].every((shape) => shape === '200 ok' || shape === '503 draining'),
          );
          expect(errorLines(server)).toEqual([]);
          expect(shapes.filter((shape) => shape === '503 draining').length).toBeGreaterThanOrEqual(
            3,
          );
          // The request held across SIGTERM was carried out and answered.
          expect(last.heldAnswer).toBe('HTTP/1.1 201 Created');
          for (const outcome of outcomes) {
            if (outcome.kind === 'refused') {
              expect(outcome.status, outcome.label).toBe(503); // arrived while closing
            }
          }
          // Every API-key request before SIGTERM was answered (and so must be counted).
          expect(last.keyed).toEqual(Array(KEYED_TOTAL).fill(200));

          // Sandbox sessions' last use is written every minute and on close only.
          const sessionSeenAt = (await sandboxSessionLastSeen(env, meter.sandboxSession)).getTime();

          restarted = await startServer(env);
          const url = restarted.url;
          const after = await storedCounters(url, meter);
          // The enforcement queued last: finished before exit, or by the restarted server.
          const jobPath = `/api/v1/enforcement/jobs/${last.jobId}`;
          const jobStatus = async () =>
            (
              await call<{ status: string }>(
                url,
                'GET',
                jobPath,
                { ...meter.anonymous, 'x-forwarded-for': checkAddress() },
                undefined,
                200,
              )
            ).status;
          const atRestart = await jobStatus();
          let finished = atRestart;
          const waited = await eventually(
            async () => {
              finished = await jobStatus();
              return TERMINAL.includes(finished);
            },
            `enforcement job ${last.jobId} to finish`,
            30_000,
          ).then(
            () => undefined,
            (error: Error) => error,
          );
          // Every acknowledged write is there; nothing landed unacknowledged.
          const tally = await verifyAcknowledged(url, writers, outcomes);
          // A connection can close under a request the server never read (HTTP/1.1
          // keep-alive: the client must retry, with its Idempotency-Key for a POST). What
          // must never happen is a request the server carried out going unanswered.
          const unanswered = await landedUnacknowledged(url, writers, outcomes);

          const before = last.stored;
          const flushed = (stamp: (c: typeof after) => number, since: number) =>
            `${stamp(before) >= since ? 'already stored' : 'buffered'}, ${stamp(after) >= since ? 'kept' : 'LOST'}`;
          console.log(
            `crash-safety ${backend.label} SIGTERM: ${summaryOf(tally)}; landed unacknowledged ${unanswered.length}; ` +
              `${outcomes.filter((o) => o.kind === 'refused').length} answered 503, ` +
              `/health polled ${health.answers.length}× (${shapes.filter((x) => x === '503 draining').length} draining), ` +
              `${outcomes.filter((o) => o.kind === 'not connected').length} refused at connect, ` +
              `${outcomes.filter((o) => o.kind === 'cut off').length} closed unread; exit 0 in ${stoppedWithin} ms. ` +
              `At SIGTERM → after restart: key usage ${before.usage.total}/${KEYED_TOTAL} stored → ${after.usage.total}/${KEYED_TOTAL}; ` +
              `key last use ${flushed((c) => c.keyUsedAt, last.from)}; ` +
              `MCP token last use ${flushed((c) => c.tokenUsedAt, last.from)}; ` +
              `device last seen ${flushed((c) => c.deviceSeenAt, last.from)}; ` +
              `sandbox-session last seen ${sessionSeenAt >= last.from ? 'kept' : 'LOST'}; ` +
              `enforcement ${TERMINAL.includes(atRestart) ? 'finished before exit' : `${atRestart} at restart, then`} ${finished}`,
          );

          // Every keyed request counted, the key's, the token's, the device's and the sandbox
          // session's last use stamped: whatever the flush timers had not written, the stop did.
          expect(after.usage).toEqual({ total: KEYED_TOTAL, ok: KEYED_TOTAL });
          expect(after.keyUsedAt).toBeGreaterThanOrEqual(last.from);
          expect(after.keyUsedFrom).toBe(meter.ip);
          expect(after.tokenUsedAt).toBeGreaterThanOrEqual(last.from);
          expect(after.deviceSeenAt).toBeGreaterThanOrEqual(last.from);
          expect(sessionSeenAt).toBeGreaterThanOrEqual(last.from);
          expect(waited).toBeUndefined();
          expect(finished).toBe('completed');
          expectNothingLost(tally);
          expect(unanswered).toEqual([]);
        } finally {
          await killHard(server);
          if (restarted) {
            await killHard(restarted);
          }
        }
      },
      PROCESS_TIMEOUT_MS,
    );
  });
}
