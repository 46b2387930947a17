// docs/decisions.md "Lingering close": an answer sent before the request body has arrived
// (413 from Content-Length, 401/403/429 from the headers) reaches a `fetch` client still
// sending, instead of being destroyed by a TCP reset. The server is a real process (in the
// same process as the client the race is hidden), every request is on a fresh connection,
// bodies are 2 MiB and 8 MiB, with and without valid credentials.
import { rmSync } from 'node:fs';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newDeveloper } from './acknowledged-writes.js';
import { newDataDir } from './database.js';
import { killHard, type RunningServer, startServer } from './server-process.js';

const MiB = 1024 * 1024;
const CONNECTIONS = 200;
const CONCURRENCY = 8;
const TIMEOUT_MS = 240_000;

interface Case {
  name: string;
  path: string;
  headers: () => Record<string, string>;
  status: number;
  message: string;
}

let addresses = 0;
/** Anonymous callers are limited per address: each request comes from a new one. */
function nextAddress(): string {
  addresses++;
  return `10.77.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
}

describe('early answers to large bodies reach fetch (lingering close)', () => {
  let dataDir = '';
  let server: RunningServer;
  let cases: Case[] = [];

  beforeAll(async () => {
    const env: Record<string, string> = { TRUST_PROXY: 'true' };
    if (process.env.DATABASE_URL) {
      env.DATABASE_URL = process.env.DATABASE_URL;
    } else {
      dataDir = newDataDir('early');
      env.DATA_DIR = dataDir;
    }
    server = await startServer(env);
    const developer = await newDeveloper(server.url, nextAddress(), 'early answers');
    const mint = async (orgId: string) =>
      (
        await call<{ key: string }>(
          server.url,
          'POST',
          `/api/v1/developers/orgs/${orgId}/keys`,
          developer.session,
          { name: 'early', environment: 'test' },
          201,
        )
      ).key;
    const key = await mint(developer.orgId);
    // A second org whose bucket (100 a minute) is spent before the large requests.
    const spentOrg = await call<{ id: string }>(
      server.url,
      'POST',
      '/api/v1/developers/orgs',
      developer.session,
      { name: 'spent' },
      201,
    );
    const spentKey = await mint(spentOrg.id);
    for (let i = 0; i < 100; i++) {
      await call(
        server.url,
        'GET',
        '/api/v1/developer/platforms',
        { 'x-api-key': spentKey },
        undefined,
        200,
      );
    }
    const tooLarge = `request body exceeds ${MiB} bytes`;
    const session = developer.session.authorization;
    cases = [
      {
        name: 'anonymous (sandbox), 413',
        path: '/api/v1/families',
        headers: () => ({ 'x-forwarded-for': nextAddress() }),
        status: 413,
        message: tooLarge,
      },
      {
        name: 'valid session, 413',
        path: '/api/v1/families',
        headers: () => ({ authorization: session, 'x-forwarded-for': nextAddress() }),
        status: 413,
        message: tooLarge,
      },
      {
        name: 'valid API key, 413',
        path: '/api/v1/developer/families',
        headers: () => ({ authorization: `Bearer ${key}` }),
        status: 413,
        message: tooLarge,
      },
      {
        name: 'unknown API key, 401 before the body',
        path: '/api/v1/developer/families',
        headers: () => ({
          authorization: `Bearer svc_test_${'x'.repeat(40)}`,
          'x-forwarded-for': nextAddress(),
        }),
        status: 401,
        message: 'invalid API key',
      },
      {
        name: 'session on a key route, 403 before the body',
        path: '/api/v1/developer/families',
        headers: () => ({ authorization: session, 'x-forwarded-for': nextAddress() }),
        status: 403,
        message: 'no API scopes in context',
      },
      {
        name: 'spent org bucket, 429 before the body',
        path: '/api/v1/developer/families',
        headers: () => ({ 'x-api-key': spentKey }),
        status: 429,
        message: 'rate limit exceeded',
      },
    ];
  }, TIMEOUT_MS);

  afterAll(async () => {
    if (server) {
      await killHard(server);
    }
    if (dataDir) {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it(
    `answers every one of ${CONNECTIONS} fresh connections with its 4xx in the envelope`,
    async () => {
      const bodies = [Buffer.alloc(2 * MiB, 0x20), Buffer.alloc(8 * MiB, 0x20)];
      const outcomes: string[] = [];
      const failures: string[] = [];
      let next = 0;
      const send = async (n: number) => {
        const which = cases[n % cases.length] as Case;
        const body = bodies[Math.floor(n / cases.length) % 2] as Buffer;
        const label = `#${n} ${which.name} (${body.length / MiB} MiB)`;
        // A new connection per request: nothing is reused across answers.
        const dispatcher = new Agent();
        try {
          const response = await fetch(`${server.url}${which.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...which.headers() },
            body,
            dispatcher,
          });
          const text = await response.text();
          const envelope = JSON.parse(text) as { code?: number; message?: string };
          if (
            response.status !== which.status ||
            envelope.code !== which.status ||
            envelope.message !== which.message
          ) {
            failures.push(`${label}: ${response.status} ${text}`);
          }
          outcomes.push(`${response.status}`);
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause;
          failures.push(`${label}: ${cause?.code ?? (error as Error).message}`);
        } finally {
          await dispatcher.close();
        }
      };
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < CONNECTIONS) {
            await send(next++);
          }
        }),
      );
      const tally: Record<string, number> = {};
      for (const status of outcomes) {
        tally[status] = (tally[status] ?? 0) + 1;
      }
      console.log(
        `early answers: ${CONNECTIONS} connections, ${JSON.stringify(tally)}, ${failures.length} failed`,
      );
      expect(failures).toEqual([]);
      expect(outcomes).toHaveLength(CONNECTIONS);
      // And the server is still there and healthy afterwards.
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    },
    TIMEOUT_MS,
  );
});
