// haven.auditLog against a real Haven: a page, every entry across pages (each page asked for
// once), the org's log, and verify recomputing the chain as its holder would — passing on the
// real chain and its signed head, failing where an attacker with SQL access changed, removed
// or forged an entry (CONTRACT.md §12.1).
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import canonicalize from 'canonicalize';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { newSession } from '../../../test/identity.js';
import { type AuditEntry, Haven, type StewardJwk, verifyAuditChain } from '../src/index.js';

describe('haven.auditLog', () => {
  let t: TestApp;
  let baseUrl = '';
  let stewardKeys: { keys: StewardJwk[] };

  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    stewardKeys = (await (await fetch(`${baseUrl}/.well-known/ocss/keys`)).json()) as {
      keys: StewardJwk[];
    };
  });
  afterAll(async () => {
    await t.close();
  });

  /** A client whose requests are counted, and a family with a child and its policy. */
  async function familyWithChanges(session: string, children = 3) {
    const urls: string[] = [];
    const haven = new Haven({
      baseUrl,
      sandboxSession: session,
      fetch: (input, init) => {
        urls.push(String(input));
        return fetch(input, init);
      },
    });
    const setup = await haven.setup.quick({ child_name: 'Ada', birth_date: '2015-06-01' });
    await haven.policies.putRule(setup.policy.id, 'web_safesearch', {
      enabled: true,
      config: { enabled: true },
    });
    for (let i = 0; i < children; i++) {
      await haven.children.create(setup.family.id, {
        name: `Child ${i}`,
        birth_date: '2016-01-01',
      });
    }
    urls.length = 0;
    return { haven, familyId: setup.family.id, urls };
  }

  /** Every entry of the family, oldest first (one page of the largest size). */
  async function chainOf(haven: Haven, familyId: string) {
    return (await haven.auditLog.list(familyId, { limit: 200 })).entries.reverse();
  }

  const db = () => t.database.handle.db;

  /** What an attacker with SQL access does: the append-only trigger off for one statement. */
  async function tamper(statement: ReturnType<typeof sql>) {
    await sql`alter table audit_entries disable trigger audit_entries_append_only`.execute(db());
    try {
      await statement.execute(db());
    } finally {
      await sql`alter table audit_entries enable trigger audit_entries_append_only`.execute(db());
    }
  }

  it('awaits one page, newest first, and iterates every entry across pages, each page once', async () => {
    const { haven, familyId, urls } = await familyWithChanges('audit-pages');
    const all = await chainOf(haven, familyId);
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect(all.map((entry) => entry.seq)).toEqual(all.map((_, index) => index + 1));
    expect(all.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['policy.rule_updated', 'child.created']),
    );
    urls.length = 0;

    const first = await haven.auditLog.list(familyId, { limit: 2 });
    expect(first.entries.map((entry) => entry.seq)).toEqual([all.length, all.length - 1]);
    expect(first.next_before).toBe(first.entries[1]?.id);
    expect(urls).toHaveLength(1);

    // Awaited, then iterated: the first page is not asked for again.
    urls.length = 0;
    const listing = haven.auditLog.list(familyId, { limit: 2 });
    expect((await listing).entries).toEqual(first.entries);
    const seen: AuditEntry[] = [];
    for await (const entry of listing) {
      seen.push(entry);
    }
    expect(seen.map((entry) => entry.seq)).toEqual(all.map((entry) => entry.seq).reverse());
    expect(seen).toEqual([...all].reverse());
    expect(urls).toHaveLength(Math.ceil(all.length / 2));
    expect(urls.slice(1).every((url) => url.includes('before='))).toBe(true);

    // From a cursor: the entries older than it, to the first.
    const older: number[] = [];
    for await (const entry of haven.auditLog.list(familyId, { before: all[2]?.id, limit: 1 })) {
      older.push(entry.seq);
    }
    expect(older).toEqual([2, 1]);
  });

  it("lists the org's log the same way (a session of an owner)", async () => {
    const session = await newSession(t.app);
    const haven = new Haven({ baseUrl, sessionToken: session.token });
    const org = await haven.orgs.create({ name: 'Acme Kids' });
    for (const name of ['one', 'two', 'three']) {
      await haven.apiKeys.create(org.id, { name, environment: 'test' });
    }
    const page = await haven.auditLog.listOrg(org.id, { limit: 1 });
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]?.org_id).toBe(org.id);
    const entries: AuditEntry[] = [];
    for await (const entry of haven.auditLog.listOrg(org.id, { limit: 1 })) {
      entries.push(entry);
    }
    expect(entries.filter((entry) => entry.action === 'api_key.created')).toHaveLength(3);
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, i) => entries.length - i));
    expect(await haven.auditLog.verify(entries)).toEqual({
      valid: true,
      entries: entries.length,
      head_hash: entries[0]?.hash,
    });
  });

  it('verifies the real chain, in any order, against the signed head and the steward key', async () => {
    const { haven, familyId } = await familyWithChanges('audit-verify');
    const head = await haven.auditLog.head(familyId);
    const entries = await chainOf(haven, familyId);
    const shuffled = [...entries.slice(2), ...entries.slice(0, 2).reverse()];
    expect(await haven.auditLog.verify(shuffled, { head, stewardKey: stewardKeys })).toEqual({
      valid: true,
      entries: entries.length,
      head_hash: head.head_hash,
      signature: 'verified',
    });
    expect(head.entries).toBe(entries.length);
    // One key (the JWK itself) does as well as the key set.
    const [key] = stewardKeys.keys;
    expect(await verifyAuditChain(entries, { head, stewardKey: key })).toMatchObject({
      valid: true,
      signature: 'verified',
    });
    // Without a key, the head's hash is checked and the signature said unchecked.
    expect(await verifyAuditChain(entries, { head })).toMatchObject({
      valid: true,
      signature: 'unchecked',
      note: expect.stringContaining('no stewardKey'),
    });

    // A head whose count was changed no longer matches what was signed…
    const forgedHead = {
      ...head,
      entries: head.entries - 1,
      head_hash: entries.at(-2)?.hash ?? '',
    };
    expect(await verifyAuditChain(entries, { head: forgedHead, stewardKey: stewardKeys })).toEqual({
      valid: false,
      seq: head.entries - 1,
      id: entries.at(-2)?.id,
      reason: "the head's fields are not what its signature covers",
    });
    // …and a key that is not the steward's does not verify it.
    const otherJwk = generateKeyPairSync('ed25519').publicKey.export({
      format: 'jwk',
    }) as StewardJwk;
    expect(await verifyAuditChain(entries, { head, stewardKey: otherJwk })).toMatchObject({
      valid: false,
      seq: head.entries,
      reason: "the head's signature does not verify with the steward key",
    });
    expect(
      await verifyAuditChain(entries, { head, stewardKey: { ...otherJwk, kid: 'retired' } }),
    ).toMatchObject({ valid: false, reason: expect.stringMatching(/not among the steward keys/) });
  });

  it('takes a head signed before the newest entries, and refuses a log missing the newest', async () => {
    const { haven, familyId } = await familyWithChanges('audit-race', 1);
    const earlier = await haven.auditLog.head(familyId);
    await haven.children.create(familyId, { name: 'Later', birth_date: '2017-01-01' });
    const entries = await chainOf(haven, familyId);
    expect(
      await haven.auditLog.verify(entries, { head: earlier, stewardKey: stewardKeys }),
    ).toEqual({
      valid: true,
      entries: entries.length,
      head_hash: entries.at(-1)?.hash,
      signature: 'verified',
    });
    // The log read before the change, checked against a head signed after it.
    const later = await haven.auditLog.head(familyId);
    expect(await haven.auditLog.verify(entries.slice(0, -1), { head: later })).toEqual({
      valid: false,
      seq: later.entries,
      id: null,
      reason: `the head counts ${later.entries} entries but the newest given is seq ${later.entries - 1}: the newest are missing`,
    });
  });

  it('fails at the entry an attacker changed in the database', async () => {
    const { haven, familyId } = await familyWithChanges('audit-tamper');
    const before = await chainOf(haven, familyId);
    const victim = before.find((entry) => entry.action === 'policy.rule_updated');
    expect(victim).toBeDefined();
    expect(await haven.auditLog.verify(before)).toMatchObject({ valid: true });

    await tamper(
      sql`update audit_entries set changes = ${JSON.stringify({ enabled: false })}::jsonb
        where id = ${victim?.id}`,
    );
    const after = await chainOf(haven, familyId);
    expect(after.find((entry) => entry.id === victim?.id)?.changes).toEqual({ enabled: false });
    expect(await haven.auditLog.verify(after)).toEqual({
      valid: false,
      seq: victim?.seq,
      id: victim?.id,
      reason: "the entry's hash is not the hash of its content",
    });
  });

  it('fails where an entry was removed from the middle of the chain', async () => {
    const { haven, familyId } = await familyWithChanges('audit-gap');
    const before = await chainOf(haven, familyId);
    const removed = before[2];
    await tamper(sql`delete from audit_entries where id = ${removed?.id}`);
    const after = await chainOf(haven, familyId);
    expect(after).toHaveLength(before.length - 1);
    expect(await haven.auditLog.verify(after)).toEqual({
      valid: false,
      seq: 4,
      id: before[3]?.id,
      reason: 'seq 4 follows seq 2: 1 entry is missing',
    });
  });

  it('fails at the next link, or at the signed head, for a forged entry with a recomputed hash', async () => {
    const { haven, familyId } = await familyWithChanges('audit-forge');
    const head = await haven.auditLog.head(familyId);
    const chain = await chainOf(haven, familyId);

    /** Rewrites an entry's action and its hash as they would be computed for it. */
    async function forge(entry: AuditEntry | undefined) {
      if (!entry) {
        throw new Error('no entry to forge');
      }
      const { hash: _, ...body } = { ...entry, action: 'child.viewed' };
      const hash = createHash('sha256')
        .update(canonicalize(body) as string)
        .digest('hex');
      await tamper(
        sql`update audit_entries set action = 'child.viewed', hash = ${hash} where id = ${entry.id}`,
      );
    }

    // In the middle: its own hash checks out, the next entry's prev_hash does not.
    const middle = chain[1];
    await forge(middle);
    expect(await haven.auditLog.verify(await chainOf(haven, familyId))).toEqual({
      valid: false,
      seq: 3,
      id: chain[2]?.id,
      reason: "the entry's prev_hash is not the previous entry's hash",
    });

    // The newest: nothing after it to break, so only the signed head tells.
    const newest = chain.at(-1);
    await forge(newest);
    const forged = (await chainOf(haven, familyId)).map((entry) =>
      entry.id === middle?.id ? (chain[1] as AuditEntry) : entry,
    );
    expect(await haven.auditLog.verify(forged)).toMatchObject({ valid: true });
    expect(await haven.auditLog.verify(forged, { head, stewardKey: stewardKeys })).toEqual({
      valid: false,
      seq: newest?.seq,
      id: newest?.id,
      reason: "the entry's hash is not the head's head_hash",
    });
  });

  it('starts from the first kept entry after a purge; a chain from seq 1 starts at 64 zeros', async () => {
    const { haven, familyId } = await familyWithChanges('audit-purge');
    const head = await haven.auditLog.head(familyId);
    const chain = await chainOf(haven, familyId);
    // The retention purge's way: the oldest entries removed, in a transaction that says so.
    await db()
      .transaction()
      .execute(async (trx) => {
        await sql`select set_config('haven.audit_removal', 'on', true)`.execute(trx);
        await sql`delete from audit_entries where chain_id = ${familyId} and seq <= 2`.execute(trx);
      });
    const kept = await chainOf(haven, familyId);
    expect(kept[0]?.seq).toBe(3);
    expect(await haven.auditLog.verify(kept, { head, stewardKey: stewardKeys })).toEqual({
      valid: true,
      entries: chain.length - 2,
      head_hash: head.head_hash,
      signature: 'verified',
    });
    const [genesis, ...rest] = chain;
    const unanchored = { ...(genesis as AuditEntry), prev_hash: 'f'.repeat(64) };
    expect(await verifyAuditChain([unanchored, ...rest])).toEqual({
      valid: false,
      seq: 1,
      id: genesis?.id,
      reason: "the first entry's prev_hash is not 64 zeros",
    });
    expect(await verifyAuditChain([])).toEqual({
      valid: true,
      entries: 0,
      head_hash: '0'.repeat(64),
    });
  });
});
