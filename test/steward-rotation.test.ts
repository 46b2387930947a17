// Steward key rotation with real processes (CONTRACT §9; docs/decisions.md "Steward key
// rotation").
// - PostgreSQL: two servers on one database started with different OCSS_STEWARD_KEYs (what a
//   rolling deploy of a rotation looks like). Each instance's served trust list always names
//   a key that instance's /keys serves; the mismatch is logged at warn naming both kids; a
//   re-issue through either instance stays verifiable on both.
// - Embedded storage: a restart on the same DATA_DIR with a new key re-issues once, signed
//   by it, and still serves the old key.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, newDataDir, type TestDatabase } from './database.js';
import { killHard, type RunningServer, startServer } from './server-process.js';
import { eventually } from './tcp-proxy.js';
import { type Jwk, newStewardKey, verifyTrustListBody } from './trust-list-verifier.js';

const TIMEOUT_MS = 180_000;
const STEWARD = 'did:ocss:haven-steward';

/** One instance as a verifier sees it: its list, checked against its own /keys. */
async function servedBy(server: RunningServer) {
  const body = await (await fetch(`${server.url}/.well-known/ocss/trust-list`)).text();
  const keys = (
    (await (await fetch(`${server.url}/.well-known/ocss/keys`)).json()) as { keys: Jwk[] }
  ).keys;
  const { document, keyId } = verifyTrustListBody(body, keys);
  return { number: document.issue.number, keyId, kids: keys.map((key) => key.kid) };
}

/** Warn lines (pino level 40) of a server's log. */
function warnings(server: RunningServer): string[] {
  return server.output.stdout.split('\n').filter((line) => line.includes('"level":40'));
}

describe.runIf(process.env.DATABASE_URL)(
  'two instances on one PostgreSQL, different steward keys',
  () => {
    let database: TestDatabase;
    const servers: RunningServer[] = [];
    afterAll(async () => {
      for (const server of servers) {
        await killHard(server);
      }
      await database?.drop();
    });

    it(
      'serve only lists their own /keys can verify, warn naming both kids, and stay consistent across re-issues',
      async () => {
        database = await createTestDatabase();
        const [a, b] = [newStewardKey(), newStewardKey()];
        const env = { DATABASE_URL: database.url as string };
        const first = await startServer({ ...env, OCSS_STEWARD_KEY: a.pem });
        servers.push(first);
        const before = await servedBy(first);
        expect(before.keyId).toBe(`${STEWARD}#${a.kid}`);

        const second = await startServer({ ...env, OCSS_STEWARD_KEY: b.pem });
        servers.push(second);
        // The second start re-issued once, signed by its key; the first instance follows
        // (within its 1 s check) and serves both keys.
        for (const server of [first, second]) {
          await eventually(async () => (await servedBy(server)).keyId.endsWith(b.kid), 'B');
          const seen = await servedBy(server);
          expect(seen.number).toBe(before.number + 1);
          expect(seen.kids).toEqual([b.kid, a.kid]);
        }
        await eventually(
          async () => warnings(first).some((line) => line.includes(a.kid) && line.includes(b.kid)),
          'the first instance to warn of the mismatch, naming both kids',
        );

        // A change through the first instance re-issues signed by its key A: both instances
        // follow, and each still verifies what it serves.
        const admitted = await fetch(`${first.url}/api/v1/advisors/self-register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            did: 'did:ocss:rotation-witness',
            public_key_b64url: Buffer.alloc(32, 7).toString('base64url'),
          }),
        });
        expect(admitted.status).toBe(200);
        for (const server of [first, second]) {
          await eventually(async () => (await servedBy(server)).keyId.endsWith(a.kid), 'A again');
          const seen = await servedBy(server);
          expect(seen.kids).toEqual([a.kid, b.kid]);
        }
        await eventually(
          async () => warnings(second).some((line) => line.includes(a.kid) && line.includes(b.kid)),
          'the second instance to warn of the mismatch, naming both kids',
        );
      },
      TIMEOUT_MS,
    );
  },
);

describe.runIf(!process.env.DATABASE_URL)(
  'a rotation on embedded storage, across a restart',
  () => {
    const dataDir = newDataDir('rotation');
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it(
      're-issues once signed by the new key and still serves the old one',
      async () => {
        const [a, b] = [newStewardKey(), newStewardKey()];
        const first = await startServer({ DATA_DIR: dataDir, OCSS_STEWARD_KEY: a.pem });
        let before: Awaited<ReturnType<typeof servedBy>>;
        try {
          before = await servedBy(first);
          expect(before.keyId).toBe(`${STEWARD}#${a.kid}`);
          first.child.kill('SIGTERM');
          expect(await first.exited).toBe(0);
        } finally {
          await killHard(first);
        }
        const second = await startServer({ DATA_DIR: dataDir, OCSS_STEWARD_KEY: b.pem });
        try {
          const after = await servedBy(second);
          expect(after.number).toBe(before.number + 1);
          expect(after.keyId).toBe(`${STEWARD}#${b.kid}`);
          expect(after.kids).toEqual([b.kid, a.kid]);
          expect(second.output.stdout).toContain('steward key rotated');
        } finally {
          await killHard(second);
        }
      },
      TIMEOUT_MS,
    );
  },
);
