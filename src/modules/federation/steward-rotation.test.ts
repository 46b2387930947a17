// Steward key rotation (CONTRACT §9): a start with another OCSS_STEWARD_KEY re-issues the
// trust list once, signed by the new key; /.well-known/ocss/keys serves the current key and
// those retired less than 30 days ago; the served list always names a key /keys serves.
// Restarts here are new app instances on the same database (real processes: see
// test/steward-rotation.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase, type TestDatabase } from '../../../test/database.js';
import { type Jwk, newStewardKey, verifyTrustListBody } from '../../../test/trust-list-verifier.js';

const DAY_MS = 86_400_000;

describe('steward key rotation across restarts', () => {
  const clock = new TestClock();
  const [a, b, c] = [newStewardKey(), newStewardKey(), newStewardKey()];
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  async function start(key: { pem: string }): Promise<TestApp> {
    return buildTestApp({ database, clock, env: { OCSS_STEWARD_KEY: key.pem } });
  }

  /** What an outside verifier sees: the list checked against the same instance's /keys. */
  async function served(t: TestApp) {
    const body = (await t.app.inject({ url: '/.well-known/ocss/trust-list' })).body;
    const keys = (await t.app.inject({ url: '/.well-known/ocss/keys' })).json().keys as Jwk[];
    const { document, keyId } = verifyTrustListBody(body, keys);
    return { body, number: document.issue.number, keyId, kids: keys.map((key) => key.kid) };
  }

  it('re-issues once signed by the new key and serves the old one as retired for 30 days', async () => {
    const first = await start(a);
    const before = await served(first);
    expect(before.keyId).toBe(`did:ocss:haven-steward#${a.kid}`);
    expect(before.kids).toEqual([a.kid]);
    await first.app.close();

    // Restart with the same key: nothing changes, byte for byte.
    const same = await start(a);
    expect((await served(same)).body).toBe(before.body);
    await same.app.close();

    clock.advance(60_000);
    const rotated = await start(b);
    const after = await served(rotated);
    expect(after.number).toBe(before.number + 1);
    expect(after.keyId).toBe(`did:ocss:haven-steward#${b.kid}`);
    expect(after.kids).toEqual([b.kid, a.kid]);
    const document = JSON.parse(JSON.parse(after.body).document);
    const steward = document.entries.find(
      (entry: { did: string }) => entry.did === 'did:ocss:haven-steward',
    );
    expect(steward.jwks.signing_keys.map((key: Jwk) => key.kid)).toEqual([b.kid]);
    expect(rotated.logs.some((line) => String(line.msg).startsWith('steward key rotated'))).toBe(
      true,
    );

    // The retired key is served until 30 days after its retirement, then no more.
    rotated.clock.advance(30 * DAY_MS - 1_000);
    expect((await served(rotated)).kids).toEqual([b.kid, a.kid]);
    rotated.clock.advance(2_000);
    const later = await served(rotated);
    expect(later.kids).toEqual([b.kid]);
    expect(later.body).toBe(after.body);
    await rotated.app.close();

    // Rolling back to the old key is a rotation too: one new issue, signed by it again.
    const rolledBack = await start(a);
    const back = await served(rolledBack);
    expect(back.number).toBe(after.number + 1);
    expect(back.keyId).toBe(`did:ocss:haven-steward#${a.kid}`);
    expect(back.kids).toEqual([a.kid, b.kid]);
    await rolledBack.app.close();
  });

  it('makes one issue however many instances start together with a new key', async () => {
    const before = await start(a);
    const number = (await served(before)).number;
    await before.app.close();
    const second = database.reopen?.() ?? database.handle;
    const together = await Promise.all([
      start(c),
      buildTestApp({
        database: { ...database, handle: second },
        clock,
        env: { OCSS_STEWARD_KEY: c.pem },
      }),
    ]);
    try {
      for (const t of together) {
        const seen = await served(t);
        expect(seen.number).toBe(number + 1);
        expect(seen.keyId).toBe(`did:ocss:haven-steward#${c.kid}`);
        expect(seen.kids[0]).toBe(c.kid);
      }
    } finally {
      for (const t of together) {
        await t.app.close();
      }
      if (second !== database.handle) {
        await second.close();
      }
    }
  });
});
