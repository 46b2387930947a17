// CONTRACT.md §12.1 for families, members, policies, quick setup, age signals, birthdays and
// test clocks: every successful write states exactly one entry naming its actor, target,
// request and changes (settings with their values, personal data by field name only); an
// idempotent replay and a call that changes nothing state none; Haven's own birthdays are
// one system entry per child per birthday applied.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import {
  bearer,
  createOrg,
  longSession,
  type MintedKey,
  mintKey,
  newSession,
  type Session,
} from '../../../test/identity.js';

type Headers = Record<string, string>;

interface Entry {
  id: string;
  seq: number;
  occurred_at: string;
  family_id: string | null;
  org_id: string | null;
  actor: { type: string; id: string; label: string };
  action: string;
  target: { type: string; id: string };
  request_id: string | null;
  changes: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** Every personal value the tests send: none may appear in any entry read. */
const PERSONAL = [
  'Quillon Household',
  'Quillons Renamed',
  'Wrenfield Home',
  'Zephyrine',
  'Ottoline',
  'Barnabus',
  'Isadora',
  'Cassius',
  'Marigold',
  'Pemberton Rules',
  'Pemberton Renamed',
  "Clock of Ottoline's",
  '2013-06-21',
  '2012-11-07',
  '2014-03-10',
  '2008-03-05',
  '2016-09-14',
];

describe('the audit log of the product plane (families, policies, setup, ages, clocks)', () => {
  let t: TestApp;
  let owner: Session;
  /** Every entry any test read, for the final scan for personal values. */
  const read: Entry[] = [];

  beforeAll(async () => {
    t = await buildTestApp();
    owner = await longSession(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    headers: Headers,
    payload?: unknown,
  ) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function ok(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    headers: Headers,
    payload?: unknown,
  ) {
    const res = await send(method, url, headers, payload);
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res;
  }

  /** A chain, newest first (all of it: these chains are short). */
  async function familyLog(headers: Headers, familyId: string): Promise<Entry[]> {
    const res = await send('GET', `/families/${familyId}/audit-log?limit=200`, headers);
    expect(res.statusCode, res.body).toBe(200);
    const entries = res.json().entries as Entry[];
    read.push(...entries);
    return entries;
  }

  async function orgLog(session: Session, orgId: string): Promise<Entry[]> {
    const res = await send('GET', `/developers/orgs/${orgId}/audit-log?limit=200`, session.auth);
    expect(res.statusCode, res.body).toBe(200);
    const entries = res.json().entries as Entry[];
    read.push(...entries);
    return entries;
  }

  /** The entries of a chain (newest first) after the newest of `before`. */
  const since = (before: readonly Entry[], after: readonly Entry[]) =>
    after.filter((entry) => entry.seq > (before[0]?.seq ?? 0));

  /**
   * Runs a write and answers the one entry it added to the chain `log` reads, which names
   * the request (its x-request-id) — and asserts it added exactly one.
   */
  async function oneEntry<R extends { headers: Record<string, unknown> }>(
    log: () => Promise<Entry[]>,
    write: () => Promise<R>,
  ) {
    const before = await log();
    const res = await write();
    const added = since(before, await log());
    expect(added, 'exactly one entry for the request').toHaveLength(1);
    const entry = added[0] as Entry;
    expect(entry.request_id).toBe(res.headers['x-request-id']);
    return { entry, res };
  }

  /** Entries of any chain naming a request. */
  const entriesOfRequest = async (requestId: unknown) =>
    t.database.handle.db
      .selectFrom('audit_entries')
      .select(['action', 'chain_id'])
      .where('request_id', '=', String(requestId))
      .execute();

  /** Recomputes a chain oldest first, as anyone holding the entries can. */
  function chainHolds(newestFirst: readonly Entry[]): boolean {
    const chain = [...newestFirst].reverse();
    let prev = '0'.repeat(64);
    return chain.every((entry, index) => {
      const { hash, ...body } = entry;
      const expected = createHash('sha256')
        .update(canonicalize(body) as string)
        .digest('hex');
      const holds = entry.seq === index + 1 && entry.prev_hash === prev && expected === hash;
      prev = hash;
      return holds;
    });
  }

  async function makeClock(headers: Headers, frozenTime: string, name?: string) {
    const res = await ok('POST', '/sandbox/test-clocks', headers, {
      frozen_time: frozenTime,
      ...(name ? { name } : {}),
    });
    return res.json() as { id: string };
  }

  /** Advances a clock and waits (with a deadline, polling the database) for its run. */
  async function advance(headers: Headers, clockId: string, frozenTime: string) {
    const res = await ok('POST', `/sandbox/test-clocks/${clockId}/advance`, headers, {
      frozen_time: frozenTime,
    });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const row = await t.database.handle.db
        .selectFrom('test_clocks')
        .select('status')
        .where('id', '=', clockId)
        .executeTakeFirstOrThrow();
      if (row.status === 'ready') {
        return res;
      }
      expect(Date.now(), 'the clock never became ready').toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('families and members (a session): created, updated, clock joined, members added, changed, removed', async () => {
    const auth = owner.auth;
    let familyId = '';
    const created = await oneEntry(
      () => (familyId ? familyLog(auth, familyId) : Promise.resolve([])),
      async () => {
        const res = await ok('POST', '/families', auth, { name: 'Quillon Household' });
        familyId = res.json().id;
        return res;
      },
    );
    expect(created.entry).toMatchObject({
      seq: 1,
      family_id: familyId,
      org_id: null,
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      action: 'family.created',
      target: { type: 'family', id: familyId },
      changes: { name: '[redacted]' },
    });
    expect(created.entry.changes).toEqual({ name: '[redacted]' });
    const log = () => familyLog(auth, familyId);

    const renamed = await oneEntry(log, () =>
      ok('PATCH', `/families/${familyId}`, auth, { name: 'Quillons Renamed' }),
    );
    expect(renamed.entry).toMatchObject({
      action: 'family.updated',
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      target: { type: 'family', id: familyId },
    });
    expect(renamed.entry.changes).toEqual({ name: '[redacted]' });

    // A person's clock writes nothing itself; the family joining it is the family's change.
    const made = await ok('POST', '/sandbox/test-clocks', auth, {
      frozen_time: '2026-02-01T00:00:00Z',
    });
    expect(await entriesOfRequest(made.headers['x-request-id'])).toEqual([]);
    const clock = made.json() as { id: string };
    const joined = await oneEntry(log, () =>
      ok('PATCH', `/families/${familyId}`, auth, { test_clock_id: clock.id }),
    );
    expect(joined.entry).toMatchObject({ action: 'family.updated' });
    expect(joined.entry.changes).toEqual({ test_clock_id: clock.id });

    const other = await newSession(t.app);
    const added = await oneEntry(log, () =>
      ok('POST', `/families/${familyId}/members`, auth, { user_id: other.userId, role: 'parent' }),
    );
    const memberId = added.res.json().id as string;
    expect(added.entry).toMatchObject({
      action: 'family_member.added',
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      target: { type: 'user', id: other.userId },
    });
    expect(added.entry.changes).toEqual({ role: 'parent' });
    // A refused write (already a member) writes nothing.
    const again = await send('POST', `/families/${familyId}/members`, auth, {
      user_id: other.userId,
      role: 'parent',
    });
    expect(again.statusCode).toBe(409);

    const changed = await oneEntry(log, () =>
      ok('PATCH', `/families/${familyId}/members/${memberId}`, auth, { role: 'guardian' }),
    );
    expect(changed.entry).toMatchObject({
      action: 'family_member.updated',
      target: { type: 'user', id: other.userId },
    });
    expect(changed.entry.changes).toEqual({ role: 'guardian' });

    const removed = await oneEntry(log, () =>
      ok('DELETE', `/families/${familyId}/members/${memberId}`, auth),
    );
    expect(removed.entry).toMatchObject({
      action: 'family_member.removed',
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      target: { type: 'user', id: other.userId },
      changes: {},
    });
    const chain = await log();
    expect(chain.map((entry) => entry.action)).toEqual([
      'family_member.removed',
      'family_member.updated',
      'family_member.added',
      'family.updated',
      'family.updated',
      'family.created',
    ]);
    expect(chainHolds(chain)).toBe(true);
  });

  it('an idempotent replay of a family creation writes no second entry', async () => {
    const headers = { ...owner.auth, 'idempotency-key': 'audit-family-once' };
    const first = await ok('POST', '/families', headers, { name: 'Wrenfield Home' });
    const replay = await ok('POST', '/families', headers, { name: 'Wrenfield Home' });
    expect(replay.headers['ocss-replay']).toBe('original');
    expect(replay.json().id).toBe(first.json().id);
    const entries = await familyLog(owner.auth, first.json().id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'family.created',
      request_id: first.headers['x-request-id'],
    });
  });

  describe('with an API key', () => {
    let key: MintedKey;
    let keyAuth: Headers;
    let orgId: string;
    beforeAll(async () => {
      orgId = (await createOrg(t.app, owner, 'Audit Org')).id;
      key = await mintKey(t.app, owner, orgId);
      keyAuth = bearer(key.key);
    });

    const keyActor = () => ({ type: 'api_key', id: key.id, label: key.key_prefix });

    it('every policy write: created, updated, activated, paused, rules, generated, deleted', async () => {
      let familyId = '';
      const made = await oneEntry(
        () => (familyId ? familyLog(keyAuth, familyId) : Promise.resolve([])),
        async () => {
          const res = await ok('POST', '/families', keyAuth, { name: 'Pemberton Rules' });
          familyId = res.json().id;
          return res;
        },
      );
      expect(made.entry).toMatchObject({ action: 'family.created', actor: keyActor() });
      const log = () => familyLog(keyAuth, familyId);
      const child = (
        await ok('POST', `/families/${familyId}/children`, keyAuth, {
          name: 'Barnabus',
          birth_date: '2016-09-14',
        })
      ).json();

      const created = await oneEntry(log, () =>
        ok('POST', `/children/${child.id}/policies`, keyAuth, { name: 'Pemberton Rules' }),
      );
      const policyId = created.res.json().id as string;
      const target = { type: 'policy', id: policyId };
      expect(created.entry).toMatchObject({
        action: 'policy.created',
        actor: keyActor(),
        target,
      });
      expect(created.entry.changes).toEqual({
        name: '[redacted]',
        priority: 0,
        child_id: child.id,
        status: 'draft',
        version: 1,
      });

      const steps: Array<{
        write: () => Promise<{ headers: Record<string, unknown> }>;
        action: string;
        changes: Record<string, unknown>;
      }> = [
        {
          write: () =>
            ok('PATCH', `/policies/${policyId}`, keyAuth, {
              name: 'Pemberton Renamed',
              priority: 5,
            }),
          action: 'policy.updated',
          changes: { name: '[redacted]', priority: 5, version: 2 },
        },
        {
          write: () => ok('POST', `/policies/${policyId}/activate`, keyAuth),
          action: 'policy.activated',
          changes: { status: 'active', version: 3 },
        },
        {
          write: () => ok('POST', `/policies/${policyId}/pause`, keyAuth),
          action: 'policy.paused',
          changes: { status: 'paused', version: 4 },
        },
        {
          write: () =>
            ok('PUT', `/policies/${policyId}/rules/time_daily_limit`, keyAuth, {
              enabled: true,
              config: { daily_minutes: 75 },
            }),
          action: 'policy.rule_updated',
          changes: {
            category: 'time_daily_limit',
            enabled: true,
            config: { daily_minutes: 75 },
            version: 5,
          },
        },
        {
          write: () =>
            ok('PUT', `/policies/${policyId}/rules`, keyAuth, {
              rules: [
                { category: 'web_safesearch', enabled: true, config: { enabled: true } },
                { category: 'time_daily_limit', enabled: false, config: { daily_minutes: 30 } },
              ],
            }),
          action: 'policy.rules_updated',
          changes: {
            rules: [
              { category: 'web_safesearch', enabled: true, config: { enabled: true } },
              { category: 'time_daily_limit', enabled: false, config: { daily_minutes: 30 } },
            ],
            version: 6,
          },
        },
        {
          write: () => ok('DELETE', `/policies/${policyId}/rules/web_safesearch`, keyAuth),
          action: 'policy.rule_deleted',
          changes: { category: 'web_safesearch', version: 7 },
        },
      ];
      for (const step of steps) {
        const { entry } = await oneEntry(log, step.write);
        expect(entry, step.action).toMatchObject({
          action: step.action,
          actor: keyActor(),
          target,
        });
        expect(entry.changes, step.action).toEqual(step.changes);
      }

      const generated = await oneEntry(log, () =>
        ok('POST', `/policies/${policyId}/generate-from-age`, keyAuth, { strictness: 'strict' }),
      );
      expect(generated.entry).toMatchObject({
        action: 'policy.generated',
        actor: keyActor(),
        target,
        changes: { strictness: 'strict', version: 8 },
      });
      const rules = generated.res.json() as Array<{
        category: string;
        enabled: boolean;
        config: unknown;
      }>;
      // The rules as generated, with their configs (settings).
      expect(generated.entry.changes.rules).toHaveLength(20);
      const written = new Map(rules.map((rule) => [rule.category, rule]));
      for (const rule of generated.entry.changes.rules as typeof rules) {
        expect(written.get(rule.category)).toMatchObject(rule);
      }

      const deleted = await oneEntry(log, () => ok('DELETE', `/policies/${policyId}`, keyAuth));
      expect(deleted.entry).toMatchObject({
        action: 'policy.deleted',
        actor: keyActor(),
        target,
        changes: {},
      });
      expect(chainHolds(await log())).toBe(true);
    });

    it("a key's quick setup, replayed with its Idempotency-Key: one entry, written with the new family", async () => {
      const headers = { ...keyAuth, 'idempotency-key': 'audit-setup-once' };
      const body = { child_name: 'Isadora', birth_date: '2012-11-07', strictness: 'relaxed' };
      const first = await ok('POST', '/setup/quick', headers, body);
      const replay = await ok('POST', '/setup/quick', headers, body);
      expect(replay.headers['ocss-replay']).toBe('original');
      const setup = first.json();
      const entries = await familyLog(keyAuth, setup.family.id);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        seq: 1,
        actor: keyActor(),
        action: 'setup.quick',
        target: { type: 'child', id: setup.child.id },
        request_id: first.headers['x-request-id'],
      });
      expect(entries[0]?.changes).toEqual({
        family_created: true,
        family_name: '[redacted]',
        child_created: true,
        child_name: '[redacted]',
        birth_date: '[redacted]',
        policy_id: setup.policy.id,
        policy_status: 'active',
        policy_version: 1,
        strictness: 'relaxed',
        rules_written: 20,
      });
      expect(chainHolds(entries)).toBe(true);
    });

    it("a key's test clock is on its org's chain; the families it moves record it on theirs", async () => {
      const log = () => orgLog(owner, orgId);
      const created = await oneEntry(log, () =>
        ok('POST', '/sandbox/test-clocks', keyAuth, {
          frozen_time: '2031-05-01T00:00:00Z',
          name: "Clock of Ottoline's",
        }),
      );
      const clockId = created.res.json().id as string;
      const target = { type: 'test_clock', id: clockId };
      expect(created.entry).toMatchObject({
        family_id: null,
        org_id: orgId,
        actor: keyActor(),
        action: 'test_clock.created',
        target,
      });
      expect(created.entry.changes).toEqual({
        frozen_time: '2031-05-01T00:00:00.000Z',
        name: '[redacted]',
      });

      let familyId = '';
      const joined = await oneEntry(
        () => (familyId ? familyLog(keyAuth, familyId) : Promise.resolve([])),
        async () => {
          const res = await ok('POST', '/families', keyAuth, {
            name: 'Ottoline',
            test_clock_id: clockId,
          });
          familyId = res.json().id;
          return res;
        },
      );
      expect(joined.entry).toMatchObject({
        action: 'family.created',
        // On the clock: the family's entries carry its time.
        occurred_at: '2031-05-01T00:00:00.000Z',
      });
      expect(joined.entry.changes).toEqual({ name: '[redacted]', test_clock_id: clockId });

      const advanced = await oneEntry(log, () => advance(keyAuth, clockId, '2031-06-01T00:00:00Z'));
      expect(advanced.entry).toMatchObject({ action: 'test_clock.advanced', actor: keyActor() });
      expect(advanced.entry.changes).toEqual({ frozen_time: '2031-06-01T00:00:00.000Z' });

      const familyBefore = await familyLog(keyAuth, familyId);
      const deleted = await oneEntry(log, () =>
        ok('DELETE', `/sandbox/test-clocks/${clockId}`, keyAuth),
      );
      expect(deleted.entry).toMatchObject({
        action: 'test_clock.deleted',
        target,
        changes: {},
      });
      const familyAfter = await familyLog(keyAuth, familyId);
      expect(familyAfter).toHaveLength(familyBefore.length + 1);
      expect(familyAfter[0]).toMatchObject({
        action: 'family.updated',
        actor: keyActor(),
        target: { type: 'family', id: familyId },
        request_id: deleted.res.headers['x-request-id'],
        changes: { test_clock_id: null },
      });
      expect(chainHolds(await log())).toBe(true);
    });
  });

  it('quick setup in the sandbox (no credential): a new family, a sibling, a repeat that changes nothing', async () => {
    const sandbox = { 'x-sandbox-session': 'audit-product-a' };
    const first = await ok('POST', '/setup/quick', sandbox, {
      child_name: 'Zephyrine',
      birth_date: '2013-06-21',
    });
    const setup = first.json();
    const familyId = setup.family.id as string;
    const log = () => familyLog(sandbox, familyId);
    const [entry, ...rest] = await log();
    expect(rest).toHaveLength(0);
    expect(entry).toMatchObject({
      seq: 1,
      prev_hash: '0'.repeat(64),
      family_id: familyId,
      actor: { type: 'user', label: 'sandbox session' },
      action: 'setup.quick',
      target: { type: 'child', id: setup.child.id },
      request_id: first.headers['x-request-id'],
    });
    expect(entry?.changes).toEqual({
      family_created: true,
      family_name: '[redacted]',
      child_created: true,
      child_name: '[redacted]',
      birth_date: '[redacted]',
      policy_id: setup.policy.id,
      policy_status: 'active',
      policy_version: 1,
      strictness: 'recommended',
      rules_written: 20,
    });

    const body = { child_name: 'Cassius', birth_date: '2016-09-14', family_id: familyId };
    const sibling = await oneEntry(log, () => ok('POST', '/setup/quick', sandbox, body));
    expect(sibling.entry).toMatchObject({
      action: 'setup.quick',
      target: { type: 'child', id: sibling.res.json().child.id },
    });
    expect(sibling.entry.changes).toEqual({
      family_created: false,
      child_created: true,
      child_name: '[redacted]',
      birth_date: '[redacted]',
      policy_id: sibling.res.json().policy.id,
      policy_status: 'active',
      policy_version: 1,
      strictness: 'recommended',
      rules_written: 20,
    });
    // The same call again finds everything made: no change, no entry.
    const before = await log();
    await ok('POST', '/setup/quick', sandbox, body);
    expect(await log()).toEqual(before);
    expect(chainHolds(before)).toBe(true);
  });

  it('an age signal is one entry, with the age it applied', async () => {
    const setup = (
      await ok('POST', '/setup/quick', owner.auth, {
        child_name: 'Marigold',
        birth_date: '2013-06-21',
        family_name: 'Quillon Household',
      })
    ).json();
    const familyId = setup.family.id as string;
    const childId = setup.child.id as string;
    const log = () => familyLog(owner.auth, familyId);
    const { entry, res } = await oneEntry(log, () =>
      ok('POST', `/children/${childId}/age-signals`, owner.auth, {
        source: 'parent_declared',
        age_lower: 7,
        age_upper: 8,
        method: 'self declaration',
        observed_at: '2026-01-10T00:00:00Z',
      }),
    );
    const signal = res.json();
    expect(entry).toMatchObject({
      action: 'child.age_signal',
      actor: { type: 'user', id: owner.userId, label: 'owner' },
      target: { type: 'child', id: childId },
    });
    expect(entry.changes).toMatchObject({
      signal_id: signal.id,
      source: 'parent_declared',
      age_lower: 7,
      age_upper: 8,
      method: 'self declaration',
      observed_at: '2026-01-10T00:00:00.000Z',
      // 12 by birth date, at most 8 by the signal: 8 applied, the generated policy moved.
      age_applied: 8,
    });
    expect(entry.changes.policies).toEqual([
      expect.objectContaining({ policy_id: setup.policy.id, version: 2 }),
    ]);
    // A signal that moves nothing still is the signal's one entry.
    const second = await oneEntry(log, () =>
      ok('POST', `/children/${childId}/age-signals`, owner.auth, {
        source: 'apple_declared_age_range',
        age_lower: 6,
      }),
    );
    expect(second.entry.changes).toEqual({
      signal_id: second.res.json().id,
      source: 'apple_declared_age_range',
      age_lower: 6,
      age_upper: null,
      method: null,
      observed_at: second.res.json().observed_at,
    });
  });

  it('birthdays a test clock applies: one system entry per child per birthday, coming of age its own', async () => {
    const clock = await makeClock(owner.auth, '2026-03-01T09:00:00Z');
    const setup = (
      await ok('POST', '/setup/quick', owner.auth, {
        child_name: 'Ottoline',
        birth_date: '2014-03-10',
        test_clock_id: clock.id,
      })
    ).json();
    const familyId = setup.family.id as string;
    const elder = (
      await ok('POST', `/families/${familyId}/children`, owner.auth, {
        name: 'Barnabus',
        birth_date: '2008-03-05',
      })
    ).json();
    const before = await familyLog(owner.auth, familyId);
    expect(before.map((entry) => entry.action)).toEqual(['child.created', 'setup.quick']);
    expect(before[1]?.changes).toMatchObject({ test_clock_id: clock.id });

    // 384 days: two birthdays each, and nothing old enough yet for the retention purge.
    const moved = await advance(owner.auth, clock.id, '2027-03-20T00:00:00Z');
    // The advance itself (a person's clock) writes nothing: only the birthdays do.
    expect(await entriesOfRequest(moved.headers['x-request-id'])).toEqual([]);
    const applied = since(before, await familyLog(owner.auth, familyId)).reverse();
    const system = { type: 'system', id: 'haven', label: 'test clock' };
    const of = (childId: string) =>
      applied
        .filter((entry) => entry.target.id === childId)
        .map((entry) => [entry.action, entry.changes.age_applied]);
    // Ottoline: 12 on 2026-03-10, 13 on 2027-03-10. Barnabus: 18 on 2026-03-05, 19 on
    // 2027-03-05.
    expect(of(setup.child.id)).toEqual([
      ['child.age_changed', 12],
      ['child.age_changed', 13],
    ]);
    expect(of(elder.id)).toEqual([
      ['child.came_of_age', 18],
      ['child.age_changed', 19],
    ]);
    expect(applied).toHaveLength(4);
    for (const entry of applied) {
      expect(entry).toMatchObject({
        actor: system,
        request_id: null,
        target: { type: 'child' },
        // Stamped with the family's clock.
        occurred_at: '2027-03-20T00:00:00.000Z',
      });
    }
    // The 13th birthday moved the generated policy: its new version is named.
    const thirteen = applied.find(
      (entry) => entry.target.id === setup.child.id && entry.changes.age_applied === 13,
    );
    expect(thirteen?.changes.policies).toEqual([
      expect.objectContaining({ policy_id: setup.policy.id, version: 2 }),
    ]);
    expect(applied.find((entry) => entry.action === 'child.came_of_age')?.changes).toEqual({
      age_applied: 18,
      came_of_age: true,
      policies: [],
    });
    expect(chainHolds(await familyLog(owner.auth, familyId))).toBe(true);
  });

  it('no entry read holds a personal value', () => {
    expect(read.length).toBeGreaterThan(30);
    const text = JSON.stringify(read);
    for (const value of PERSONAL) {
      expect(text, value).not.toContain(value);
    }
  });
});
