// Live enforcement in real production processes (docs/decisions.md "Where workers run"): the
// API started as `npm start` starts it, with NEXTDNS_API_URL / CONTROLD_API_URL pointed at
// local doubles, runs the job itself (WORKERS=inline), or leaves it to a separate `npm run
// worker` (WORKERS=off; on PostgreSQL, the embedded database being one process's). Both
// profiles end as the policy says and the job `completed`; a refused key ends `failed` with the
// renewal message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, newDataDir, type TestDatabase } from './database.js';
import { JwksServer, newSigningKey, type SigningKey, signSession } from './jwks-server.js';
import {
  type Api,
  connectPartners,
  controldState,
  type Doubles,
  enforce,
  expectedControlD,
  expectedNextDns,
  NEXTDNS_KEY,
  nextdnsState,
  resultFor,
  setUpFamily,
  startDoubles,
} from './live-partners.js';
import { productionEnv } from './production.js';
import {
  killHard,
  type RunningScript,
  runScript,
  startServer,
  waitForLine,
} from './server-process.js';

const PROCESS_TIMEOUT_MS = 120_000;
const ISS = 'https://id.example.test/';

function apiOf(url: string, token: string): Api {
  return async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
}

describe('live enforcement in real processes', () => {
  const jwks = new JwksServer();
  let key: SigningKey;
  let doubles: Doubles;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    await jwks.start();
    key = await newSigningKey('live-process');
    jwks.keys.push(key.jwk);
    doubles = await startDoubles();
    if (process.env.DATABASE_URL) {
      database = await createTestDatabase();
    }
  });
  afterAll(async () => {
    await doubles.stop();
    await jwks.stop();
    await database?.drop();
  });

  function environment(workers: 'inline' | 'off'): Record<string, string> {
    return {
      ...productionEnv({ jwksUrl: jwks.url, issuer: ISS }),
      ...doubles.env,
      WORKERS: workers,
      ...(database ? { DATABASE_URL: database.url as string } : { DATA_DIR: newDataDir('live') }),
    };
  }

  async function parent(url: string, name: string): Promise<Api> {
    const iat = Math.floor(Date.now() / 1000);
    return apiOf(url, await signSession(key, { iss: ISS, sub: name, iat, exp: iat + 3600 }));
  }

  async function enforceAndCheck(api: Api) {
    doubles.reset();
    const family = await setUpFamily(api);
    const connections = await connectPartners(api, family.familyId);
    const job = await enforce(api, family.childId);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(nextdnsState(doubles)).toEqual(expectedNextDns());
    expect(controldState(doubles)).toEqual(expectedControlD());

    // The key is revoked on NextDNS's side: the next job fails there, with what to do.
    const revoked = doubles.nextdns as { apiKey: string };
    Object.defineProperty(revoked, 'apiKey', { value: 'rotated-elsewhere', configurable: true });
    try {
      const refused = await enforce(api, family.childId);
      expect(refused.status).toBe('partial');
      const result = resultFor(refused, 'nextdns');
      expect(result.status).toBe('failed');
      expect(result.error_message).toContain('NextDNS refused the credentials (HTTP 403)');
      expect(result.error_message).toContain(`PATCH /api/v1/connections/${connections.nextdns}`);
    } finally {
      Object.defineProperty(revoked, 'apiKey', { value: NEXTDNS_KEY, configurable: true });
    }
  }

  it(
    'WORKERS=inline: the API process brings both profiles to the policy',
    async () => {
      const server = await startServer(environment('inline'));
      try {
        await enforceAndCheck(await parent(server.url, 'inline-parent'));
        // Credentials never reach the logs.
        expect(server.output.stdout).not.toContain(NEXTDNS_KEY);
      } finally {
        await killHard(server);
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it.runIf(Boolean(process.env.DATABASE_URL))(
    'WORKERS=off: a separate npm run worker process brings both profiles to the policy',
    async () => {
      const env = environment('off');
      const server = await startServer(env);
      let worker: RunningScript | undefined;
      try {
        worker = runScript('worker', { ...env, LOG_LEVEL: 'info' });
        await waitForLine(worker, /Haven worker running/);
        await enforceAndCheck(await parent(server.url, 'worker-parent'));
        expect(worker.output.stdout).not.toContain(NEXTDNS_KEY);
      } finally {
        await killHard(server);
        if (worker) {
          await killHard(worker);
        }
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
