// Issue 11 (crash safety, graceful shutdown): the real server under concurrent writes.
// - kill -9 mid-stream: after a restart on the same storage, every write that was
//   acknowledged (2xx) is there.
// - SIGTERM mid-stream: every request the server carried out is answered (2xx; 503 for one
//   that arrived while closing), no write lands unacknowledged, and the process exits 0.
// On embedded storage (a DATA_DIR on disk) and, when DATABASE_URL is set, on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.js';
import { killHard, startServer } from './server-process.js';

const PROCESS_TIMEOUT_MS = 240_000;
const CLIENTS = 8;

type Outcome = { name: string } & (
  | { kind: 'acknowledged'; familyId: string; childId?: string; client: number }
  | { kind: 'refused'; status: number }
  | { kind: 'not connected' }
  | { kind: 'cut off'; error: string }
);

/** Each test run writes as its own sandbox users, so runs on one database never mix. */
let run = 'first';

/** Each client has its own address (TRUST_PROXY) and sandbox session, so no limit trips. */
function clientHeaders(client: number) {
  return {
    'content-type': 'application/json',
    'x-forwarded-for': `10.9.0.${client + 1}`,
    'x-sandbox-session': `crash-${run}-client-${client}`,
  };
}

/** One write: a family alone, or a quick setup (family, child, policy and 20 rules). */
async function write(url: string, client: number, n: number): Promise<Outcome> {
  const quick = n % 2 === 0;
  // Every write names its family uniquely, so what landed can be matched to what was sent.
  const name = `w-${client}-${n}`;
  try {
    const response = await fetch(`${url}${quick ? '/api/v1/setup/quick' : '/api/v1/families'}`, {
      method: 'POST',
      headers: clientHeaders(client),
      body: JSON.stringify(
        quick ? { child_name: `Kid ${n}`, birth_date: '2015-06-07', family_name: name } : { name },
      ),
    });
    const body = (await response.json()) as {
      id: string;
      family: { id: string };
      child: { id: string };
    };
    if (response.status === 201) {
      return quick
        ? { name, kind: 'acknowledged', familyId: body.family.id, childId: body.child.id, client }
        : { name, kind: 'acknowledged', familyId: body.id, client };
    }
    return { name, kind: 'refused', status: response.status };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    // Refused before anything was sent: the server no longer accepts connections.
    return code === 'ECONNREFUSED'
      ? { name, kind: 'not connected' }
      : { name, kind: 'cut off', error: code };
  }
}

/**
 * CLIENTS loops writing one request after another until `stopped()` says so or the server
 * stops accepting connections; `onOutcome` sees every answer as it comes.
 */
async function writeUntil(
  url: string,
  stopped: () => boolean,
  onOutcome: (outcome: Outcome) => void = () => {},
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = 0; n < 90 && !stopped(); n++) {
        const outcome = await write(url, client, n);
        outcomes.push(outcome);
        onOutcome(outcome);
        if (outcome.kind === 'not connected') {
          return;
        }
      }
    }),
  );
  return outcomes;
}

async function expectAllPresent(url: string, outcomes: Outcome[]) {
  const acknowledged = outcomes.filter((o) => o.kind === 'acknowledged');
  const missing: string[] = [];
  for (const outcome of acknowledged) {
    const headers = clientHeaders(outcome.client);
    const family = await fetch(`${url}/api/v1/families/${outcome.familyId}`, { headers });
    if (family.status !== 200) {
      missing.push(`family ${outcome.familyId}: ${family.status}`);
    }
    if (outcome.childId) {
      const child = await fetch(`${url}/api/v1/children/${outcome.childId}`, { headers });
      if (child.status !== 200) {
        missing.push(`child ${outcome.childId}: ${child.status}`);
      }
    }
  }
  expect(missing).toEqual([]);
  return acknowledged.length;
}

/** The names of the families each client's writes left behind. */
async function landedNames(url: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (let client = 0; client < CLIENTS; client++) {
    const response = await fetch(`${url}/api/v1/families`, { headers: clientHeaders(client) });
    for (const family of (await response.json()) as Array<{ name: string }>) {
      if (family.name.startsWith('w-')) {
        names.add(family.name);
      }
    }
  }
  return names;
}

const backends = [
  { name: 'embedded storage', postgres: false },
  { name: 'PostgreSQL', postgres: true },
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
      } else {
        dataDir = mkdtempSync(join(tmpdir(), 'haven-crash-'));
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
      'keeps every acknowledged write across kill -9',
      async () => {
        run = 'kill';
        const server = await startServer(env);
        // Killed once 40 writes are acknowledged, while every client still has one in flight.
        let acknowledged = 0;
        let killing: Promise<void> | undefined;
        const outcomes = await writeUntil(
          server.url,
          () => killing !== undefined && server.child.exitCode !== null,
          (outcome) => {
            if (outcome.kind === 'acknowledged' && ++acknowledged === 40) {
              killing = killHard(server);
            }
          },
        );
        await killing;
        expect(outcomes.filter((o) => o.kind === 'acknowledged').length).toBeGreaterThanOrEqual(40);

        const restarted = await startServer(env);
        try {
          const kept = await expectAllPresent(restarted.url, outcomes);
          process.stdout.write(
            `[crash safety, ${backend.name}] kill -9 under ${CLIENTS} writers: ${kept} acknowledged writes, ${kept} found after restart; ${outcomes.length - kept} requests unacknowledged\n`,
          );
        } finally {
          await killHard(restarted);
        }
      },
      PROCESS_TIMEOUT_MS,
    );

    it(
      'answers every accepted request on SIGTERM, refuses new ones, and exits 0',
      async () => {
        run = 'term';
        const server = await startServer(env);
        let acknowledged = 0;
        let terminated = false;
        const outcomes = await writeUntil(
          server.url,
          () => terminated && server.child.exitCode !== null,
          (outcome) => {
            if (outcome.kind === 'acknowledged' && ++acknowledged === 40) {
              terminated = true;
              server.child.kill('SIGTERM');
            }
          },
        );
        const started = Date.now();
        expect(await server.exited).toBe(0);
        expect(Date.now() - started).toBeLessThan(15_000);
        expect(server.output.stdout).toContain('"msg":"stopped"');
        for (const outcome of outcomes) {
          if (outcome.kind === 'refused') {
            expect(outcome.status).toBe(503); // arrived on an open connection while closing
          }
        }
        const restarted = await startServer(env);
        try {
          const kept = await expectAllPresent(restarted.url, outcomes);
          // A connection can close under a request the server never read (HTTP/1.1
          // keep-alive: the client must retry, with its Idempotency-Key for a POST). What
          // must never happen is a request the server carried out going unanswered: every
          // write that landed was acknowledged.
          const acknowledged = new Set(
            outcomes.filter((o) => o.kind === 'acknowledged').map((o) => o.name),
          );
          expect(
            [...(await landedNames(restarted.url))].filter((n) => !acknowledged.has(n)),
          ).toEqual([]);
          process.stdout.write(
            `[graceful stop, ${backend.name}] SIGTERM under ${CLIENTS} writers: ${kept} acknowledged, all kept; ${outcomes.filter((o) => o.kind === 'refused').length} answered 503, ${outcomes.filter((o) => o.kind === 'not connected').length} refused at connect, ${outcomes.filter((o) => o.kind === 'cut off').length} closed unread (none of them carried out)\n`,
          );
        } finally {
          await killHard(restarted);
        }
      },
      PROCESS_TIMEOUT_MS,
    );
  });
}
