// The in-process provider the connections module calls (no HTTP): codes redeem on any
// instance sharing the database, and the signature is checked as exact text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../../../test/clock.js';
import { createTestDatabase, type TestDatabase } from '../../../test/database.js';
import { DEMO_CHILDREN } from '../demo/demo-family.js';
import { createSandboxOAuthProvider } from './service.js';

describe('sandbox OAuth provider service', () => {
  let database: TestDatabase;
  const clock = new TestClock();
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('redeems on one instance the code another minted (one secret per database)', async () => {
    const db = database.handle.db;
    const [one, two] = await Promise.all([
      createSandboxOAuthProvider({ db, clock }),
      createSandboxOAuthProvider({ db, clock }),
    ]);
    expect(two.redeemCode(one.issueCode('no-children'))).toEqual({ account: 'no-children' });
    expect(one.redeemCode(two.issueCode('demo'))).toEqual({ account: 'demo' });
    expect(one.redeemCode('')).toBeUndefined();
    expect(one.redeemCode('sbxauth_.')).toBeUndefined();
  });

  it('expires codes after 10 minutes of the injected clock', async () => {
    const provider = await createSandboxOAuthProvider({ db: database.handle.db, clock });
    const code = provider.issueCode('demo');
    clock.advance(10 * 60_000 - 1);
    expect(provider.redeemCode(code)).toEqual({ account: 'demo' });
    clock.advance(1);
    expect(provider.redeemCode(code)).toBeUndefined();
  });

  it('refuses another spelling of a valid signature (base64url trailing bits)', async () => {
    const provider = await createSandboxOAuthProvider({ db: database.handle.db, clock });
    const code = provider.issueCode('demo');
    // The 43rd character of a 32-byte MAC carries 4 bits; its 2 low bits decode to nothing.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(code.at(-1) ?? '');
    const twin = `${code.slice(0, -1)}${alphabet[last ^ 1]}`;
    const [, mac = ''] = code.split('.');
    const [, twinMac = ''] = twin.split('.');
    expect(Buffer.from(twinMac, 'base64url').equals(Buffer.from(mac, 'base64url'))).toBe(true);
    expect(provider.redeemCode(twin)).toBeUndefined();
    expect(provider.redeemCode(code)).toEqual({ account: 'demo' });
  });

  it('reads the demo profiles from the demo family, and gives callers their own copies', async () => {
    const provider = await createSandboxOAuthProvider({ db: database.handle.db, clock });
    const profiles = provider.profilesFor('demo');
    expect(profiles.map((p) => [p.displayName, p.subject_ref])).toEqual(
      DEMO_CHILDREN.map((child) => [child.name, child.id]),
    );
    const first = profiles[0];
    if (first) {
      first.displayName = 'changed';
    }
    expect(provider.profilesFor('demo')[0]?.displayName).toBe(DEMO_CHILDREN[0].name);
    expect(provider.profilesFor('no-children')).toEqual([]);
  });

  it('redeems nothing and mints nothing when disabled (outside the sandbox)', async () => {
    const sandbox = await createSandboxOAuthProvider({ db: database.handle.db, clock });
    const disabled = await createSandboxOAuthProvider({
      db: database.handle.db,
      clock,
      enabled: false,
    });
    expect(disabled.enabled).toBe(false);
    expect(disabled.redeemCode(sandbox.issueCode('demo'))).toBeUndefined();
    expect(() => disabled.issueCode('demo')).toThrow(/sandbox/);
  });
});
