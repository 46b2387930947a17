// Large bodies on fresh connections: whatever credential comes with a 2 MiB or 8 MiB body, the
// client gets its answer (the 4xx decided before the body was read, the 413 of the body
// limit, or a fast path's 200 given ahead of the router), never a reset instead
// (http/lingering-close.ts). The server listens on a real port in this process, so client
// and server share one event loop, as they do under load; every request opens its own
// connection (an undici Agent each), at most CONCURRENCY at once.
import { Agent, fetch, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from './app.js';
import { createOrg, longSession, mintKey } from './identity.js';

const MiB = 1024 * 1024;
const CONNECTIONS = 500;
const CONCURRENCY = 24;
const TOO_LARGE = 'request body exceeds 1048576 bytes';

type Credential = 'garbage' | 'missing' | 'session' | 'key';
const CREDENTIALS: Credential[] = ['garbage', 'missing', 'session', 'key'];

interface Expected {
  status: number;
  /** The envelope's message; undefined for the fast path's 200. */
  message?: string;
}

interface Route {
  method: string;
  path: string;
  /** Comes without X-Forwarded-For: the keyed fast paths leave a proxied request to the route. */
  direct?: boolean;
  expect: Record<Credential, Expected>;
}

const BAD_TOKEN = { status: 401, message: 'invalid or expired token' };
const NO_SCOPES = { status: 403, message: 'no API scopes in context' };
const TOO_LARGE_413 = { status: 413, message: TOO_LARGE };

const ROUTES: Route[] = [
  // Session routes: the 401 leaves before the body is read.
  {
    method: 'POST',
    path: '/api/v1/mcp/tokens',
    expect: {
      garbage: BAD_TOKEN,
      missing: { status: 401, message: 'missing authorization header' },
      session: TOO_LARGE_413,
      key: BAD_TOKEN,
    },
  },
  // Product routes: anonymous sandbox callers get as far as the body limit.
  {
    method: 'PATCH',
    path: '/api/v1/children/0b7d3a0e-6c1f-4a57-9a43-3c5b1b0f2a11',
    expect: {
      garbage: BAD_TOKEN,
      missing: TOO_LARGE_413,
      session: TOO_LARGE_413,
      key: TOO_LARGE_413,
    },
  },
  // Key routes: 403 before the body for anything but a key.
  {
    method: 'POST',
    path: '/api/v1/developer/families',
    expect: { garbage: NO_SCOPES, missing: NO_SCOPES, session: NO_SCOPES, key: TOO_LARGE_413 },
  },
  // The signed bulk read is offered to its fast path first, which leaves a large body to the
  // route (http/fast-path.ts, signed-read-fast-path.ts): the route's 413, before the signature.
  {
    method: 'POST',
    path: '/api/v1/csm/reviews/bulk',
    expect: {
      garbage: TOO_LARGE_413,
      missing: TOO_LARGE_413,
      session: TOO_LARGE_413,
      key: TOO_LARGE_413,
    },
  },
  // A keyed catalog: a known key is answered ahead of the router before a byte of the body
  // is read (auth/keyed-catalog-fast-path.ts); everything else by the route.
  {
    method: 'GET',
    path: '/api/v1/developer/platforms',
    direct: true,
    expect: { garbage: NO_SCOPES, missing: NO_SCOPES, session: NO_SCOPES, key: { status: 200 } },
  },
];

let t: TestApp & { baseUrl: string };
const authorization: Record<Credential, string | undefined> = {
  garbage: 'Bearer garbage-garbage-garbage',
  missing: undefined,
  session: undefined,
  key: undefined,
};

let addresses = 0;
/** Anonymous and failed callers are limited per address: each request comes from a new one. */
function nextAddress(): string {
  addresses++;
  return `10.78.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
}

beforeAll(async () => {
  t = await buildListeningTestApp({ env: { TRUST_PROXY: 'true' } });
  const session = await longSession(t);
  authorization.session = session.auth.authorization;
  const org = await createOrg(t.app, session);
  authorization.key = `Bearer ${(await mintKey(t.app, session, org.id)).key}`;
}, 60_000);

afterAll(async () => {
  await t?.close();
});

/** One request on its own connection: the status and body, or what broke it. */
async function send(
  route: Route,
  credential: Credential,
  body: Buffer,
): Promise<{ status: number; text: string } | { broken: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const value = authorization[credential];
  if (value !== undefined) {
    headers.authorization = value;
  }
  if (!route.direct) {
    headers['x-forwarded-for'] = nextAddress();
  }
  // Every request in a fresh rate-limit minute: this file is about connections, not limits.
  t.clock.advance(61_000);
  const dispatcher = new Agent();
  try {
    const url = `${t.baseUrl}${route.path}`;
    if (route.method === 'GET') {
      // fetch sends no body with a GET; undici's request does.
      const answer = await request(url, { method: 'GET', headers, body, dispatcher });
      return { status: answer.statusCode, text: await answer.body.text() };
    }
    const answer = await fetch(url, { method: route.method, headers, body, dispatcher });
    return { status: answer.status, text: await answer.text() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { broken: cause?.code ?? cause?.message ?? (error as Error).message };
  } finally {
    await dispatcher.close();
  }
}

/** What is wrong with an answer, or undefined. */
function judge(expected: Expected, status: number, text: string): string | undefined {
  if (status !== expected.status) {
    return `status ${status}: ${text.slice(0, 200)}`;
  }
  if (expected.message === undefined) {
    return undefined;
  }
  let envelope: { error?: unknown; message?: unknown; code?: unknown };
  try {
    envelope = JSON.parse(text);
  } catch {
    return `not JSON: ${text.slice(0, 200)}`;
  }
  if (
    typeof envelope.error !== 'string' ||
    envelope.message !== expected.message ||
    envelope.code !== status
  ) {
    return `not the envelope: ${text.slice(0, 200)}`;
  }
  return undefined;
}

describe('large bodies on fresh connections', () => {
  it(`answers every one of ${CONNECTIONS} connections, none reset`, async () => {
    const bodies = [Buffer.alloc(2 * MiB, 0x20), Buffer.alloc(8 * MiB, 0x20)];
    const cases = ROUTES.flatMap((route) =>
      CREDENTIALS.flatMap((credential) => bodies.map((body) => ({ route, credential, body }))),
    );
    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CONNECTIONS) {
          const n = next++;
          const { route, credential, body } = cases[n % cases.length] as (typeof cases)[number];
          const label = `#${n} ${route.method} ${route.path} (${credential}, ${body.length / MiB} MiB)`;
          const outcome = await send(route, credential, body);
          if ('broken' in outcome) {
            failures.push(`${label}: ${outcome.broken}`);
            continue;
          }
          statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
          const wrong = judge(route.expect[credential], outcome.status, outcome.text);
          if (wrong) {
            failures.push(`${label}: ${wrong}`);
          }
        }
      }),
    );
    console.log(
      `large bodies: ${CONNECTIONS} connections, ${JSON.stringify(statuses)}, ${failures.length} failed`,
    );
    expect(failures).toEqual([]);
  }, 120_000);
});
