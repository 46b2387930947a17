// CONTRACT.md §12.1: one entry per change, in the change's transaction; per-family chains
// whose hashes anyone can recompute, `seq` without gaps under concurrent writers, a signed
// head, pages newest first, a database that refuses to change or remove an entry, and reads
// for the family's members only.
import canonicalize from 'canonicalize';
import { compactVerify, importJWK } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { type ChainEntry, chainHolds } from '../../../test/audit-chain.js';
import { newSession, type Session } from '../../../test/identity.js';
import { injectFailure } from '../../../test/injected-failure.js';

describe('the audit log', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (session: Session) => (method: string, url: string, payload?: object) =>
    t.app.inject({
      method: method as 'GET',
      url: `/api/v1${url}`,
      headers: session.auth,
      ...(payload ? { payload } : {}),
    });

  async function familyOf(session: Session) {
    const created = await as(session)('POST', '/families', { name: 'The Lovelaces' });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().id as string;
  }

  async function log(session: Session, familyId: string, query = '') {
    const res = await as(session)('GET', `/families/${familyId}/audit-log${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { entries: ChainEntry[]; next_before: string | null };
  }

  it('records who changed what, with no personal value, on a chain anyone can recompute', async () => {
    const owner = await newSession(t.app);
    const call = as(owner);
    const familyId = await familyOf(owner);
    const created = await call('POST', `/families/${familyId}/children`, {
      name: 'Ada',
      birth_date: '2015-12-10',
    });
    expect(created.statusCode).toBe(201);
    const childId = created.json().id as string;
    const renamed = await call('PATCH', `/children/${childId}`, { name: 'Ada King' });
    expect(renamed.statusCode).toBe(200);

    const { entries } = await log(owner, familyId);
    const ours = entries.filter((entry) => entry.target.id === childId);
    expect(ours.map((entry) => entry.action)).toEqual(['child.updated', 'child.created']);
    const [updated, made] = ours as [ChainEntry, ChainEntry];
    expect(updated).toMatchObject({
      family_id: familyId,
      actor: { type: 'user', label: 'owner' },
      target: { type: 'child', id: childId },
      request_id: renamed.headers['x-request-id'],
      changes: { name: '[redacted]' },
    });
    expect(made.changes).toEqual({ name: '[redacted]', birth_date: '[redacted]' });
    expect(JSON.stringify(entries)).not.toMatch(/Ada|2015-12-10/);
    // Oldest first, the chain links up from 64 zeros with seq 1, 2, ...
    const chain = [...entries].reverse();
    expect(chain.map((entry) => entry.seq)).toEqual(chain.map((_, index) => index + 1));
    expect(chain[0]?.prev_hash).toBe('0'.repeat(64));
    expect(chainHolds(chain)).toBe(true);
    const tampered = chain.map((entry) =>
      entry.id === made.id ? { ...entry, changes: { name: 'Ada' } } : entry,
    );
    expect(chainHolds(tampered)).toBe(false);
  });

  it('signs the head with the steward key, over the newest hash', async () => {
    const owner = await newSession(t.app);
    const familyId = await familyOf(owner);
    await as(owner)('POST', `/families/${familyId}/children`, {
      name: 'Kit',
      birth_date: '2016-01-01',
    });
    const head = await as(owner)('GET', `/families/${familyId}/audit-log/head`);
    expect(head.statusCode, head.body).toBe(200);
    const body = head.json();
    const { entries } = await log(owner, familyId);
    expect(body).toMatchObject({
      family_id: familyId,
      entries: entries[0]?.seq,
      head_hash: entries[0]?.hash,
    });
    const keys = (await t.app.inject({ url: '/.well-known/ocss/keys' })).json().keys as Array<
      Record<string, string>
    >;
    const header = JSON.parse(Buffer.from(body.signature.split('.')[0], 'base64url').toString());
    const jwk = keys.find((key) => key.kid === header.kid);
    expect(jwk, 'the kid is published').toBeDefined();
    const verified = await compactVerify(body.signature, await importJWK(jwk as never, 'EdDSA'));
    const { signature: _, ...statement } = body;
    expect(new TextDecoder().decode(verified.payload)).toBe(canonicalize(statement));
  });

  it('pages newest first with before/next_before, and refuses a foreign before', async () => {
    const owner = await newSession(t.app);
    const call = as(owner);
    const familyId = await familyOf(owner);
    for (const name of ['A', 'B', 'C', 'D', 'E']) {
      const res = await call('POST', `/families/${familyId}/children`, {
        name,
        birth_date: '2016-01-01',
      });
      expect(res.statusCode).toBe(201);
    }
    const all = (await log(owner, familyId)).entries;
    const first = await log(owner, familyId, '?limit=2');
    expect(first.entries.map((entry) => entry.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect(first.next_before).toBe(first.entries[1]?.id);
    const second = await log(owner, familyId, `?limit=2&before=${first.next_before}`);
    expect(second.entries.map((entry) => entry.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    const last = await log(owner, familyId, `?limit=200&before=${all[3]?.id}`);
    expect(last.next_before).toBeNull();
    const elsewhere = await call(
      'GET',
      `/families/${familyId}/audit-log?before=${crypto.randomUUID()}`,
    );
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json().message).toBe('before must be the id of an entry of this audit log');
    const zero = await call('GET', `/families/${familyId}/audit-log?limit=0`);
    expect(zero.statusCode).toBe(400);
  });

  it('answers a non-member as the family itself does (403), and an unknown family 404', async () => {
    const owner = await newSession(t.app);
    const familyId = await familyOf(owner);
    const stranger = await newSession(t.app);
    const family = await as(stranger)('GET', `/families/${familyId}`);
    expect(family.statusCode).toBe(403);
    for (const path of ['audit-log', 'audit-log/head']) {
      const res = await as(stranger)('GET', `/families/${familyId}/${path}`);
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe(family.json().message);
      const unknown = await as(owner)('GET', `/families/${crypto.randomUUID()}/${path}`);
      expect(unknown.statusCode).toBe(404);
    }
  });

  it('a change whose entry cannot be written is not committed', async () => {
    const owner = await newSession(t.app);
    const familyId = await familyOf(owner);
    const created = await as(owner)('POST', `/families/${familyId}/children`, {
      name: 'Stays',
      birth_date: '2016-01-01',
    });
    const childId = created.json().id as string;
    const before = await log(owner, familyId);
    const restore = await injectFailure(t.database.handle.db, {
      name: 'probe_fail_audit_child_updated',
      on: 'insert',
      table: 'audit_entries',
      when: `new.action = 'child.updated'`,
    });
    try {
      const failed = await as(owner)('PATCH', `/children/${childId}`, { name: 'Changed' });
      expect(failed.statusCode).toBe(500);
    } finally {
      await restore();
    }
    const child = await as(owner)('GET', `/children/${childId}`);
    expect(child.json().name).toBe('Stays');
    expect((await log(owner, familyId)).entries).toEqual(before.entries);
  });

  it('refuses to change or remove an entry in the database', async () => {
    const owner = await newSession(t.app);
    const familyId = await familyOf(owner);
    await as(owner)('POST', `/families/${familyId}/children`, {
      name: 'X',
      birth_date: '2016-01-01',
    });
    const kept = (await log(owner, familyId)).entries;
    expect(kept.length).toBeGreaterThan(0);
    const db = t.database.handle.db;
    await expect(
      sql`update audit_entries set action = 'child.forged' where family_id = ${familyId}`.execute(
        db,
      ),
    ).rejects.toThrow(/audit entries cannot be changed or removed/);
    await expect(
      sql`delete from audit_entries where family_id = ${familyId}`.execute(db),
    ).rejects.toThrow(/audit entries cannot be changed or removed/);
    await expect(sql`truncate audit_entries`.execute(db)).rejects.toThrow(/cannot be truncated/);
    expect((await log(owner, familyId)).entries).toEqual(kept);
  });

  it('keeps seq without gaps under 20 concurrent writers on one family', async () => {
    const owner = await newSession(t.app);
    const familyId = await familyOf(owner);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        as(owner)('POST', `/families/${familyId}/children`, {
          name: `Child ${index}`,
          birth_date: '2016-01-01',
        }),
      ),
    );
    expect(results.map((res) => res.statusCode)).toEqual(Array(20).fill(201));
    const chain = (await log(owner, familyId, '?limit=200')).entries.reverse();
    expect(chain.map((entry) => entry.seq)).toEqual(chain.map((_, index) => index + 1));
    expect(chain.filter((entry) => entry.action === 'child.created')).toHaveLength(20);
    expect(chainHolds(chain)).toBe(true);
  });
});
