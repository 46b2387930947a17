// CONTRACT.md §12.3 in the sandbox: DELETE of a family or a child erases every row about it in
// one change (the database is scanned for its ids and personal values afterwards), answers
// 204 with Haven-Erasure-Id, and leaves a receipt counting what went, signed by the steward
// key once the releases have run, readable by whoever erased and nobody else. Live partners:
// partners/live-erasure.test.ts.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { compactVerify, importJWK } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { createTestDatabase } from '../../../test/database.js';
import { findStored } from '../../../test/database-scan.js';
import { deviceAgent } from '../../../test/devices.js';
import {
  bearer,
  createOrg,
  longSession,
  mintKey,
  newSession,
  type Session,
} from '../../../test/identity.js';
import { eventually } from '../../../test/tcp-proxy.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import type { Db } from '../../db/connect.js';

type Headers = Record<string, string>;

interface Receipt {
  id: string;
  subject: { type: string; id: string };
  requested_at: string;
  completed_at: string | null;
  erased: Record<string, number>;
  releases: Array<{ platform_id: string; status: string }>;
  signature: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Names no seed or other test uses: found anywhere after the erasure means not erased. */
const FAMILY_NAME = 'Quillfeather household';
const CHILD_NAMES = ['Zephyrine', 'Balthazine'];
const TITLE = 'Moonlit Otters';

/** Rows about `ids` per table, counted the way a reader of the schema would. */
async function rowsAbout(db: Db, familyId: string, childIds: string[]) {
  const count = async (query: ReturnType<typeof sql<{ n: string | number }>>) =>
    Number((await query.execute(db)).rows[0]?.n ?? 0);
  const children = sql.join(childIds);
  return {
    families: await count(sql`select count(*) as n from families where id = ${familyId}`),
    family_members: await count(
      sql`select count(*) as n from family_members where family_id = ${familyId}`,
    ),
    children: await count(sql`select count(*) as n from children where id in (${children})`),
    age_signals: await count(
      sql`select count(*) as n from age_signals where child_id in (${children})`,
    ),
    policies: await count(sql`select count(*) as n from policies where child_id in (${children})`),
    policy_rules: await count(
      sql`select count(*) as n from policy_rules r join policies p on p.id = r.policy_id
        where p.child_id in (${children})`,
    ),
    devices: await count(sql`select count(*) as n from devices where child_id in (${children})`),
    device_reports: await count(
      sql`select count(*) as n from device_reports where child_id in (${children})`,
    ),
    viewing_history: await count(
      sql`select count(*) as n from viewing_history where child_id in (${children})`,
    ),
    enforcement_jobs: await count(
      sql`select count(*) as n from enforcement_jobs where child_id in (${children})`,
    ),
    family_connections: await count(
      sql`select count(*) as n from family_connections where family_id = ${familyId}`,
    ),
    partner_managed_state: await count(
      sql`select count(*) as n from partner_managed_state m
        join family_connections c on c.id = m.connection_id where c.family_id = ${familyId}`,
    ),
    webhooks: await count(sql`select count(*) as n from webhooks where family_id = ${familyId}`),
    webhook_deliveries: await count(
      sql`select count(*) as n from webhook_deliveries d join webhooks w on w.id = d.webhook_id
        where w.family_id = ${familyId}`,
    ),
    sandbox_platform_failures: await count(
      sql`select count(*) as n from sandbox_platform_failures where family_id = ${familyId}`,
    ),
    mcp_tokens: await count(
      sql`select count(*) as n from mcp_tokens where family_id = ${familyId}`,
    ),
    audit_entries: await count(
      sql`select count(*) as n from audit_entries where chain_id = ${familyId}`,
    ),
    idempotency_keys: await count(
      sql`select count(*) as n from idempotency_keys
        where strpos(path, ${familyId}) > 0 or strpos(coalesce(response_body, ''), ${familyId}) > 0
          or ${sql.join(
            childIds.map(
              (id) =>
                sql`strpos(path, ${id}) > 0 or strpos(coalesce(response_body, ''), ${id}) > 0`,
            ),
            sql` or `,
          )}`,
    ),
  };
}

/** The receipt verifies against the steward keys Haven publishes. */
async function verifySignature(t: TestApp, receipt: Receipt): Promise<void> {
  const keys = (await t.app.inject({ url: '/.well-known/ocss/keys' })).json().keys as Array<
    Record<string, string>
  >;
  const { signature, ...statement } = receipt;
  expect(signature).toEqual(expect.any(String));
  const header = JSON.parse(
    Buffer.from((signature as string).split('.')[0] as string, 'base64url').toString(),
  );
  const jwk = keys.find((key) => key.kid === header.kid);
  expect(jwk, 'the signing key is published').toBeDefined();
  const verified = await compactVerify(signature as string, await importJWK(jwk as never, 'EdDSA'));
  expect(new TextDecoder().decode(verified.payload)).toBe(canonicalize(statement));
}

/** Recomputes a chain oldest first, as anyone holding the entries can. */
function chainHolds(entries: Array<Record<string, unknown> & { hash: string; prev_hash: string }>) {
  let prev = '0'.repeat(64);
  if (entries.length === 0) {
    return false;
  }
  for (const { hash, ...body } of entries) {
    const expected = createHash('sha256')
      .update(canonicalize(body) as string)
      .digest('hex');
    if (expected !== hash || body.prev_hash !== prev) {
      return false;
    }
    prev = hash;
  }
  return true;
}

describe('erasure', () => {
  let t: TestApp;
  const receiver = new WebhookReceiver();
  beforeAll(async () => {
    await receiver.start();
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const as =
    (headers: Headers) =>
    async (method: string, url: string, payload?: object, status?: number) => {
      const res = await t.app.inject({
        method: method as 'GET',
        url: `/api/v1${url}`,
        headers,
        ...(payload ? { payload } : {}),
      });
      if (status !== undefined) {
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
      }
      return res;
    };

  /** A child with its 20-rule policy, a device that reported a viewing, and an age signal. */
  async function childIn(call: ReturnType<typeof as>, familyId: string, name: string) {
    const setup = (
      await call(
        'POST',
        '/setup/quick',
        { family_id: familyId, child_name: name, birth_date: '2015-04-03' },
        201,
      )
    ).json();
    const childId = setup.child.id as string;
    const device = (
      await call('POST', `/children/${childId}/devices`, { device_name: `${name}’s tablet` }, 201)
    ).json();
    const report = await deviceAgent(t).report(device.device_key, {
      report_type: 'viewing',
      reported_at: '2026-01-15T11:00:00Z',
      payload: { platform: 'netflix', title: TITLE, watched_at: '2026-01-15T10:00:00Z' },
    });
    expect(report.statusCode, report.body).toBe(202);
    await call(
      'POST',
      `/children/${childId}/age-signals`,
      { source: 'parent_declared', age_lower: 10, age_upper: 12 },
      201,
    );
    return { childId, policyId: setup.policy.id as string, deviceKey: device.device_key };
  }

  /** Until no enforcement job of these children and no delivery of the family is pending. */
  async function settled(familyId: string, childIds: string[]) {
    const db = t.database.handle.db;
    await eventually(async () => {
      const busy = await sql<{ n: string | number }>`
        select (select count(*) from enforcement_jobs where child_id in (${sql.join(childIds)})
            and status in ('pending', 'running'))
          + (select count(*) from webhook_deliveries d join webhooks w on w.id = d.webhook_id
            where w.family_id = ${familyId} and d.status = 'pending') as n`.execute(db);
      return Number(busy.rows[0]?.n) === 0;
    }, "the family's jobs and deliveries to settle");
  }

  /** A family with two children and everything a family can have. */
  async function fullFamily(owner: Session) {
    const call = as(owner.auth);
    const familyId = (await call('POST', '/families', { name: FAMILY_NAME }, 201)).json().id;
    await call('POST', '/webhooks', { family_id: familyId, url: receiver.url, events: ['*'] }, 201);
    await call('POST', `/families/${familyId}/connections`, { platform_id: 'xbox' }, 201);
    await call(
      'POST',
      `/families/${familyId}/connections`,
      { platform_id: 'nextdns', credentials: { api_key: 'sandbox-nd-key', profile_id: 'abc123' } },
      201,
    );
    const children = [];
    for (const name of CHILD_NAMES) {
      children.push(await childIn(call, familyId, name));
    }
    const childIds = children.map((child) => child.childId);
    await call('POST', '/mcp/tokens', { family_id: familyId, label: 'assistant' }, 201);
    // A write with an Idempotency-Key: its stored answer names the child.
    const keyed = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/children/${childIds[0]}`,
      headers: { ...owner.auth, 'idempotency-key': `erasure-${familyId}` },
      payload: { name: CHILD_NAMES[0] },
    });
    expect(keyed.statusCode, keyed.body).toBe(200);
    await settled(familyId, childIds);
    return { familyId, children, childIds };
  }

  async function completedReceipt(headers: Headers, id: string): Promise<Receipt> {
    let receipt: Receipt | undefined;
    await eventually(async () => {
      receipt = (await as(headers)('GET', `/erasures/${id}`, undefined, 200)).json();
      return receipt?.completed_at !== null;
    }, 'the erasure to complete');
    return receipt as Receipt;
  }

  it('erases a family: every row about it goes in one change, counted on a signed receipt', async () => {
    const owner = await newSession(t.app);
    const call = as(owner.auth);
    const { familyId, childIds } = await fullFamily(owner);
    // Armed after the jobs ran: a family's erasure takes it along, so its releases succeed.
    await call('POST', '/sandbox/platforms/xbox/fail', { family_id: familyId, times: 1 }, 201);
    const db = t.database.handle.db;
    const before = await rowsAbout(db, familyId, childIds);
    for (const table of Object.keys(before).filter((name) => name !== 'partner_managed_state')) {
      expect(before[table as keyof typeof before], table).toBeGreaterThan(0);
    }

    const erased = await call('DELETE', `/families/${familyId}`, undefined, 204);
    expect(erased.body).toBe('');
    const erasureId = erased.headers['haven-erasure-id'] as string;
    expect(erasureId).toMatch(UUID);

    // Nothing about the family is stored any more: not its ids, not its people's names, not
    // what its children watched. (The receipt names the family by id only.)
    const after = await rowsAbout(db, familyId, childIds);
    expect(
      Object.values(after).every((n) => n === 0),
      JSON.stringify(after),
    ).toBe(true);
    const stored = await findStored(db, {
      texts: [familyId, ...childIds, FAMILY_NAME, ...CHILD_NAMES, TITLE],
    });
    expect(stored).toEqual([{ table: 'public.erasure_receipts', column: 'subject_id', rows: 1 }]);
    expect((await call('GET', `/families/${familyId}`)).statusCode).toBe(404);
    expect((await call('GET', `/children/${childIds[0]}`)).statusCode).toBe(404);

    const receipt = await completedReceipt(owner.auth, erasureId);
    expect(receipt).toEqual({
      id: erasureId,
      subject: { type: 'family', id: familyId },
      requested_at: expect.any(String),
      completed_at: expect.any(String),
      erased: { ...before, sandbox_platform_failures: 1 },
      releases: [
        { platform_id: 'nextdns', status: 'released' },
        { platform_id: 'xbox', status: 'released' },
      ],
      signature: expect.any(String),
    });
    await verifySignature(t, receipt);
    // The release's sealed material is gone with its job.
    const sealed = await sql<{ n: string | number }>`
      select count(*) as n from erasure_release_secrets`.execute(db);
    expect(Number(sealed.rows[0]?.n)).toBe(0);

    // Nobody else reads the receipt: another user, an anonymous sandbox caller.
    const stranger = await newSession(t.app);
    for (const headers of [stranger.auth, { 'x-sandbox-session': 'erasure-stranger' }]) {
      const read = await as(headers)('GET', `/erasures/${erasureId}`, undefined, 404);
      expect(read.json()).toMatchObject({ code: 404, message: 'erasure not found' });
    }
    expect((await call('GET', `/erasures/${crypto.randomUUID()}`)).statusCode).toBe(404);
  });

  it('erases a child: its sibling and the family stay, the family log records it and still verifies', async () => {
    const owner = await newSession(t.app);
    const call = as(owner.auth);
    const { familyId, children, childIds } = await fullFamily(owner);
    const [erasedChild, sibling] = childIds as [string, string];
    const db = t.database.handle.db;
    const siblingBefore = await rowsAbout(db, familyId, [sibling]);
    const before = await rowsAbout(db, familyId, [erasedChild]);
    const aboutChild = await sql<{ n: string | number }>`
      select count(*) as n from webhook_deliveries d join webhooks w on w.id = d.webhook_id
      where w.family_id = ${familyId} and (payload::jsonb -> 'data' ->> 'child_id' = ${erasedChild}
        or payload::jsonb -> 'data' ->> 'id' = ${erasedChild})`.execute(db);
    const statesBefore = before.partner_managed_state;

    const erased = await call('DELETE', `/children/${erasedChild}`, undefined, 204);
    const erasureId = erased.headers['haven-erasure-id'] as string;
    expect(erasureId).toMatch(UUID);

    // The child is gone from every table but the family's log (which names it by id, with no
    // personal value), the receipt, and the child.deleted notice queued for the family's
    // endpoint (ids only); its name and what it watched are gone everywhere.
    const stored = await findStored(db, { texts: [erasedChild] });
    const tables = Object.fromEntries(stored.map((found) => [found.table, found.rows]));
    expect(Object.keys(tables).sort(), JSON.stringify(stored)).toEqual([
      'public.audit_entries',
      'public.erasure_receipts',
      'public.webhook_deliveries',
    ]);
    expect(tables['public.webhook_deliveries']).toBe(1);
    expect(await findStored(db, { texts: [CHILD_NAMES[0] as string] })).toEqual([]);
    // The sibling, its policy, device and history, and the family's own rows are untouched.
    const siblingAfter = await rowsAbout(db, familyId, [sibling]);
    expect({ ...siblingAfter, webhook_deliveries: 0, idempotency_keys: 0 }).toEqual({
      ...siblingBefore,
      webhook_deliveries: 0,
      idempotency_keys: 0,
      audit_entries: siblingBefore.audit_entries + 1,
      partner_managed_state: 0,
    });
    expect((await call('GET', `/children/${sibling}`, undefined, 200)).json().name).toBe(
      CHILD_NAMES[1],
    );
    expect((await call('GET', `/children/${erasedChild}`)).statusCode).toBe(404);
    expect((await deviceAgent(t).policy(children[0]?.deviceKey as string)).statusCode).toBe(401);
    expect((await deviceAgent(t).policy(children[1]?.deviceKey as string)).statusCode).toBe(200);

    // The family's log keeps every entry, verifiable, and ends with the erasure.
    const log = (
      await call('GET', `/families/${familyId}/audit-log?limit=200`, undefined, 200)
    ).json();
    expect(log.next_before).toBeNull();
    const chain = [...log.entries].reverse();
    expect(chain.map((entry: { seq: number }) => entry.seq)).toEqual(chain.map((_, i) => i + 1));
    expect(chainHolds(chain)).toBe(true);
    expect(log.entries[0]).toMatchObject({
      action: 'child.erased',
      target: { type: 'child', id: erasedChild },
      changes: { erasure_id: erasureId },
      actor: { type: 'user', label: 'owner' },
    });

    // The family's endpoints hear of it by ids only.
    await eventually(
      async () => receiver.ofType('child.deleted').length > 0,
      'the child.deleted message',
    );
    const notice = JSON.parse(receiver.ofType('child.deleted').at(-1)?.body as string);
    expect(notice).toMatchObject({
      family_id: familyId,
      data: { id: erasedChild, family_id: familyId },
    });

    const receipt = await completedReceipt(owner.auth, erasureId);
    expect(receipt).toEqual({
      id: erasureId,
      subject: { type: 'child', id: erasedChild },
      requested_at: t.clock.now().toISOString(),
      completed_at: t.clock.now().toISOString(),
      erased: {
        children: 1,
        age_signals: before.age_signals,
        policies: before.policies,
        policy_rules: before.policy_rules,
        devices: before.devices,
        device_reports: before.device_reports,
        viewing_history: before.viewing_history,
        enforcement_jobs: before.enforcement_jobs,
        partner_managed_state: statesBefore,
        webhook_deliveries: Number(aboutChild.rows[0]?.n),
        idempotency_keys: 1,
      },
      releases: [
        { platform_id: 'nextdns', status: 'released' },
        { platform_id: 'xbox', status: 'released' },
      ],
      signature: expect.any(String),
    });
    expect(receipt.erased.webhook_deliveries).toBeGreaterThan(0);
    await verifySignature(t, receipt);
  });

  it('reports a release that failed; a family without connections is complete at once', async () => {
    const owner = await newSession(t.app);
    const call = as(owner.auth);
    const { familyId, childIds } = await fullFamily(owner);
    // A child's erasure leaves the family's armed failure in place: its xbox release fails.
    await call('POST', '/sandbox/platforms/xbox/fail', { family_id: familyId, times: 1 }, 201);
    const first = await call('DELETE', `/children/${childIds[0]}`, undefined, 204);
    const failed = await completedReceipt(owner.auth, first.headers['haven-erasure-id'] as string);
    expect(failed.releases).toEqual([
      { platform_id: 'nextdns', status: 'released' },
      { platform_id: 'xbox', status: 'failed' },
    ]);
    await verifySignature(t, failed);

    // On a test clock: the receipt is dated by the family's clock.
    const clock = (
      await call('POST', '/sandbox/test-clocks', { frozen_time: '2031-06-15T09:00:00Z' }, 201)
    ).json();
    const lone = (
      await call('POST', '/families', { name: 'Lone', test_clock_id: clock.id }, 201)
    ).json().id;
    const done = await call('DELETE', `/families/${lone}`, undefined, 204);
    const receipt = (
      await call('GET', `/erasures/${done.headers['haven-erasure-id']}`, undefined, 200)
    ).json();
    expect(receipt).toMatchObject({
      releases: [],
      requested_at: '2031-06-15T09:00:00.000Z',
      completed_at: '2031-06-15T09:00:00.000Z',
    });
    expect(receipt.erased).toMatchObject({ families: 1, family_members: 1, children: 0 });
    await verifySignature(t, receipt);
  });

  it("is read by the org's keys; an org's family erasure goes on the org's log", async () => {
    const owner = await longSession(t);
    const org = await createOrg(t.app, owner);
    const key = await mintKey(t.app, owner, org.id);
    const sibling = await mintKey(t.app, owner, org.id, { scopes: ['read:families'] });
    const other = await longSession(t);
    const otherKey = await mintKey(t.app, other, (await createOrg(t.app, other, 'Other')).id);
    const developer = async (secret: string, method: string, url: string, payload?: object) =>
      t.app.inject({
        method: method as 'GET',
        url: `/api/v1/developer${url}`,
        headers: bearer(secret),
        ...(payload ? { payload } : {}),
      });
    const familyId = (await developer(key.key, 'POST', '/families', { name: 'Org family' })).json()
      .id;
    const erased = await developer(key.key, 'DELETE', `/families/${familyId}`);
    expect(erased.statusCode, erased.body).toBe(204);
    const erasureId = erased.headers['haven-erasure-id'] as string;

    for (const reader of [key, sibling]) {
      const read = await developer(reader.key, 'GET', `/erasures/${erasureId}`);
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json().subject).toEqual({ type: 'family', id: familyId });
    }
    expect((await developer(otherKey.key, 'GET', `/erasures/${erasureId}`)).statusCode).toBe(404);
    // A person who did not erase it does not read it, even the org's owner.
    expect((await as(owner.auth)('GET', `/erasures/${erasureId}`)).statusCode).toBe(404);

    const log = await t.app.inject({
      url: `/api/v1/developers/orgs/${org.id}/audit-log`,
      headers: owner.auth,
    });
    expect(log.statusCode, log.body).toBe(200);
    expect(log.json().entries[0]).toMatchObject({
      org_id: org.id,
      action: 'family.erased',
      actor: { type: 'api_key', id: key.id },
      target: { type: 'family', id: familyId },
      changes: { erasure_id: erasureId },
    });
  });
});

describe('the sealed release material', () => {
  it('is dropped 7 days on at the latest, the receipt saying what could not be released', async () => {
    const database = await createTestDatabase();
    const queueOnly = await buildTestApp({ database, env: { WORKERS: 'off' } });
    const owner = await longSession(queueOnly);
    const call = async (app: TestApp, method: string, url: string, payload?: object) =>
      app.app.inject({
        method: method as 'GET',
        url: `/api/v1${url}`,
        headers: owner.auth,
        ...(payload ? { payload } : {}),
      });
    const setup = (
      await call(queueOnly, 'POST', '/setup/quick', { child_name: 'Kit', birth_date: '2016-01-01' })
    ).json();
    await call(queueOnly, 'POST', `/families/${setup.family.id}/connections`, {
      platform_id: 'xbox',
    });
    const erased = await call(queueOnly, 'DELETE', `/children/${setup.child.id}`);
    expect(erased.statusCode, erased.body).toBe(204);
    const erasureId = erased.headers['haven-erasure-id'] as string;
    const db = database.handle.db;
    const sealed = await sql<{ sealed: Buffer }>`
      select sealed from erasure_release_secrets where erasure_id = ${erasureId}`.execute(db);
    const blob = Buffer.from(sealed.rows[0]?.sealed as Buffer);
    // Sealed in its own row, never in the job queue's.
    expect((await findStored(db, { bytes: [blob] })).map((found) => found.table)).toEqual([
      'public.erasure_release_secrets',
    ]);
    const pending = (await call(queueOnly, 'GET', `/erasures/${erasureId}`)).json();
    expect(pending).toMatchObject({
      completed_at: null,
      signature: null,
      releases: [{ platform_id: 'xbox', status: 'pending' }],
    });
    await queueOnly.app.close();

    // No worker ran for 8 days: the release no longer runs, the material goes.
    queueOnly.clock.advance(8 * 86_400_000);
    const workers = await buildTestApp({ database, clock: queueOnly.clock });
    try {
      let receipt: Receipt | undefined;
      await eventually(async () => {
        receipt = (await call(workers, 'GET', `/erasures/${erasureId}`)).json();
        return receipt?.completed_at !== null;
      }, 'the expired erasure to complete');
      expect(receipt?.releases).toEqual([{ platform_id: 'xbox', status: 'failed' }]);
      expect(await findStored(db, { bytes: [blob] })).toEqual([]);
    } finally {
      await workers.app.close();
      await database.drop();
    }
  });
});
