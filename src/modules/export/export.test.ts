// CONTRACT.md §12.2: a family's export and a child's. Every part in the shape the API's own
// GET answers, counted against the database; no secret of any kind the family has, nor its
// SHA-256, nor its sealed bytes; a child's export holds that child only; owners, parents and
// keys with read:families, nobody else; a download's headers; and a failure after the answer
// began ends the connection, the body cut short.
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { deviceAgent } from '../../../test/devices.js';
import {
  bearer,
  createOrg,
  type MintedKey,
  mintKey,
  newSession,
  type Session,
} from '../../../test/identity.js';

const HOOK_URL = 'http://127.0.0.1:9/hooks';
const NEXTDNS = { api_key: 'nextdns-key-5d1f0a9e7c', profile_id: 'nxprof-81c2e4' };
const CONTROLD = { api_token: 'controld-token-93b7e61f2a', profile_id: 'cdprof-4a7f03' };

type Json = Record<string, unknown> & { id: string };
interface FamilyDocument {
  exported_at: string;
  family: Json;
  members: Json[];
  children: Array<Json & { age_signals: Json[] }>;
  policies: Array<Json & { rules: Json[] }>;
  connections: Json[];
  devices: Json[];
  device_reports: Json[];
  enforcement_jobs: Json[];
  viewing_history: Json[];
  webhooks: Json[];
  deliveries: Json[];
  mcp_tokens: Json[];
  audit_log: Array<Json & { seq: number; target: { type: string; id: string } }>;
}

const byId = (rows: readonly Json[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Seeded {
  familyId: string;
  childId: string;
  otherChildId: string;
  key: MintedKey;
  orgId: string;
  owner: Session;
  parent: Session;
  guardian: Session;
  /** Every secret value the family's setup handed out or took in. */
  secrets: Record<string, string>;
}

describe('export', () => {
  let t: TestApp;
  let seeded: Seeded;

  const call =
    (headers: Record<string, string>, prefix = '/api/v1') =>
    async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const res = await t.app.inject({
        method,
        url: `${prefix}${url}`,
        headers,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res.statusCode === 204 ? undefined : res.json();
    };

  /**
   * A family made by an org's key with one of everything: people of each role, two
   * children with signals, policies, devices, reports and viewing history, two connected
   * DNS platforms with their credentials, a webhook with deliveries, an MCP token, a job.
   */
  async function seed(): Promise<Seeded> {
    const owner = await newSession(t.app);
    const parent = await newSession(t.app);
    const guardian = await newSession(t.app);
    const orgId = (await createOrg(t.app, owner)).id;
    const key = await mintKey(t.app, owner, orgId);
    const keyed = call(bearer(key.key), '/api/v1/developer');
    const setup = await keyed('POST', '/setup/quick', {
      child_name: 'Ada',
      birth_date: '2016-05-01',
    });
    const familyId = setup.family.id as string;
    const childId = setup.child.id as string;
    for (const [who, role] of [
      [owner, 'owner'],
      [parent, 'parent'],
      [guardian, 'guardian'],
    ] as const) {
      await keyed('POST', `/families/${familyId}/members`, { user_id: who.userId, role });
    }
    const other = await keyed('POST', `/families/${familyId}/children`, {
      name: 'Bo',
      birth_date: '2019-03-04',
    });
    await keyed('POST', `/children/${other.id}/policies`, { name: 'Evenings' });
    await keyed('PATCH', `/children/${childId}`, { name: 'Ada L.' });
    await keyed('PATCH', `/children/${other.id}`, { name: 'Bo L.' });
    await keyed('POST', `/children/${childId}/age-signals`, {
      source: 'parent_declared',
      age_lower: 0,
      age_upper: 17,
    });
    await keyed('POST', `/families/${familyId}/connections`, {
      platform_id: 'nextdns',
      credentials: NEXTDNS,
    });
    await keyed('POST', `/families/${familyId}/connections`, {
      platform_id: 'controld',
      credentials: CONTROLD,
    });
    const device = await keyed('POST', `/children/${childId}/devices`, { device_name: 'Tablet' });
    const otherDevice = await keyed('POST', `/children/${other.id}/devices`, {
      device_name: 'Phone',
    });
    for (const [deviceKey, title] of [
      [device.device_key, 'Bluey'],
      [device.device_key, 'Paddington'],
      [otherDevice.device_key, 'Frozen'],
    ]) {
      const report = await deviceAgent(t).report(deviceKey, {
        report_type: 'viewing',
        reported_at: '2026-01-15T11:00:00Z',
        payload: { platform: 'netflix', title, watched_at: '2026-01-15T10:00:00Z' },
      });
      expect(report.statusCode, report.body).toBe(202);
    }
    await keyed('POST', `/children/${childId}/enforce`, {});
    const webhook = await keyed('POST', '/webhooks', {
      family_id: familyId,
      url: HOOK_URL,
      events: ['*'],
    });
    await keyed('POST', `/webhooks/${webhook.id}/test`, {});
    const mcp = await call(owner.auth)('POST', '/mcp/tokens', {
      family_id: familyId,
      label: 'assistant',
    });
    return {
      familyId,
      childId,
      otherChildId: other.id,
      key,
      orgId,
      owner,
      parent,
      guardian,
      secrets: {
        'API key': key.key,
        'MCP token': mcp.plain,
        'device key': device.device_key,
        'other device key': otherDevice.device_key,
        'webhook signing secret': webhook.secret,
        'NextDNS api_key': NEXTDNS.api_key,
        'NextDNS profile_id': NEXTDNS.profile_id,
        'Control D api_token': CONTROLD.api_token,
        'Control D profile_id': CONTROLD.profile_id,
        "owner's session token": owner.token,
        "parent's session token": parent.token,
        "guardian's session token": guardian.token,
      },
    };
  }

  async function exported(url: string, headers: Record<string, string>) {
    const res = await t.app.inject({ url, headers });
    expect(res.statusCode, res.body).toBe(200);
    return { res, document: JSON.parse(res.body) as FamilyDocument };
  }

  beforeAll(async () => {
    // No workers: the jobs and deliveries stay as made, so every count holds while read.
    t = await buildTestApp({ env: { WORKERS: 'off' } });
    seeded = await seed();
  });
  afterAll(() => t.close());

  /** How many rows the database holds for the family, table by table. */
  async function countsOf(familyId: string) {
    const { rows } = await sql<Record<string, string | number>>`select
      (select count(*) from family_members where family_id = ${familyId}) as members,
      (select count(*) from children where family_id = ${familyId}) as children,
      (select count(*) from age_signals s join children c on c.id = s.child_id where c.family_id = ${familyId}) as age_signals,
      (select count(*) from policies p join children c on c.id = p.child_id where c.family_id = ${familyId}) as policies,
      (select count(*) from policy_rules r join policies p on p.id = r.policy_id join children c on c.id = p.child_id where c.family_id = ${familyId}) as rules,
      (select count(*) from family_connections where family_id = ${familyId}) as connections,
      (select count(*) from devices where family_id = ${familyId}) as devices,
      (select count(*) from device_reports r join children c on c.id = r.child_id where c.family_id = ${familyId}) as device_reports,
      (select count(*) from enforcement_jobs where family_id = ${familyId}) as enforcement_jobs,
      (select count(*) from viewing_history v join children c on c.id = v.child_id where c.family_id = ${familyId}) as viewing_history,
      (select count(*) from webhooks where family_id = ${familyId}) as webhooks,
      (select count(*) from webhook_deliveries d join webhooks w on w.id = d.webhook_id where w.family_id = ${familyId}) as deliveries,
      (select count(*) from mcp_tokens where family_id = ${familyId}) as mcp_tokens,
      (select count(*) from audit_entries where chain_id = ${familyId}) as audit_log
    `.execute(t.database.handle.db);
    return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  it('holds every part of the family, each counted as the database holds it', async () => {
    const { document } = await exported(
      `/api/v1/families/${seeded.familyId}/export`,
      seeded.owner.auth,
    );
    const counts = await countsOf(seeded.familyId);
    expect(Object.keys(document)).toEqual([
      'exported_at',
      'family',
      'members',
      'children',
      'policies',
      'connections',
      'devices',
      'device_reports',
      'enforcement_jobs',
      'viewing_history',
      'webhooks',
      'deliveries',
      'mcp_tokens',
      'audit_log',
    ]);
    expect(document.exported_at).toBe(t.clock.now().toISOString());
    expect({
      members: document.members.length,
      children: document.children.length,
      age_signals: document.children.flatMap((child) => child.age_signals).length,
      policies: document.policies.length,
      rules: document.policies.flatMap((policy) => policy.rules).length,
      connections: document.connections.length,
      devices: document.devices.length,
      device_reports: document.device_reports.length,
      enforcement_jobs: document.enforcement_jobs.length,
      viewing_history: document.viewing_history.length,
      webhooks: document.webhooks.length,
      deliveries: document.deliveries.length,
      mcp_tokens: document.mcp_tokens.length,
      audit_log: document.audit_log.length,
    }).toEqual(counts);
    // Something of everything was made, so every count above is of real rows.
    for (const [part, count] of Object.entries(counts)) {
      expect(count, part).toBeGreaterThan(0);
    }
    expect(counts).toMatchObject({ members: 3, children: 2, connections: 2, mcp_tokens: 1 });
    // The chain whole, oldest first.
    expect(document.audit_log.map((entry) => entry.seq)).toEqual(
      document.audit_log.map((_, at) => at + 1),
    );
  });

  it('shows each part as the API’s own GET answers it', async () => {
    const { familyId, childId, otherChildId } = seeded;
    const get = call(seeded.owner.auth);
    const { document } = await exported(`/api/v1/families/${familyId}/export`, seeded.owner.auth);
    expect(document.family).toEqual(await get('GET', `/families/${familyId}`));
    expect(byId(document.members)).toEqual(byId(await get('GET', `/families/${familyId}/members`)));
    expect(byId(document.connections)).toEqual(
      byId(await get('GET', `/families/${familyId}/connections`)),
    );
    expect(byId(document.webhooks)).toEqual(
      byId(await get('GET', `/webhooks?family_id=${familyId}`)),
    );
    const deliveries = [];
    for (const webhook of document.webhooks) {
      deliveries.push(...(await get('GET', `/webhooks/${webhook.id}/deliveries?limit=100`)));
    }
    expect(byId(document.deliveries)).toEqual(byId(deliveries));
    const tokens = (await get('GET', '/mcp/tokens')) as Json[];
    expect(document.mcp_tokens).toEqual(tokens.filter((token) => token.family_id === familyId));
    for (const id of [childId, otherChildId]) {
      const { age_signals, ...child } = document.children.find((c) => c.id === id) as Json & {
        age_signals: Json[];
      };
      expect(child).toEqual(await get('GET', `/children/${id}`));
      expect(byId(age_signals)).toEqual(byId(await get('GET', `/children/${id}/age-signals`)));
      const policies = (await get('GET', `/children/${id}/policies`)) as Json[];
      for (const policy of policies) {
        const { rules, ...exportedPolicy } = document.policies.find(
          (p) => p.id === policy.id,
        ) as Json & { rules: Json[] };
        expect(exportedPolicy).toEqual(policy);
        expect(rules).toEqual(await get('GET', `/policies/${policy.id}/rules`));
      }
      // last_seen_at is activity, written from memory every few seconds: not compared.
      const seen = ({ last_seen_at: _seen, ...device }: Json) => device;
      expect(byId(document.devices.filter((d) => d.child_id === id)).map(seen)).toEqual(
        byId(await get('GET', `/children/${id}/devices`)).map(seen),
      );
      expect(byId(document.enforcement_jobs.filter((j) => j.child_id === id))).toEqual(
        byId(await get('GET', `/children/${id}/enforcement/jobs`)),
      );
      expect(byId(document.viewing_history.filter((v) => v.child_id === id))).toEqual(
        byId(await get('GET', `/viewing-history/${id}?limit=100`)),
      );
    }
    const log = await get('GET', `/families/${familyId}/audit-log?limit=200`);
    expect(document.audit_log).toEqual([...log.entries].reverse());
  });

  it('holds no secret, no SHA-256 of one and no sealed value, in either document', async () => {
    const sealed = await sql<{ value: Buffer }>`
      select credentials as value from family_connections where family_id = ${seeded.familyId}
      union all select secret from webhooks where family_id = ${seeded.familyId}`.execute(
      t.database.handle.db,
    );
    expect(sealed.rows).toHaveLength(3);
    const texts = [
      (
        await t.app.inject({
          url: `/api/v1/families/${seeded.familyId}/export`,
          headers: seeded.owner.auth,
        })
      ).body,
      (
        await t.app.inject({
          url: `/api/v1/children/${seeded.childId}/export`,
          headers: seeded.owner.auth,
        })
      ).body,
    ];
    for (const text of texts) {
      expect(text.startsWith('{"exported_at"')).toBe(true);
      for (const [what, secret] of Object.entries(seeded.secrets)) {
        expect(text.includes(secret), what).toBe(false);
        expect(text.includes(sha256(secret)), `SHA-256 of ${what}`).toBe(false);
      }
      for (const { value } of sealed.rows) {
        expect(text.includes(value.toString('hex'))).toBe(false);
        expect(text.includes(value.toString('base64'))).toBe(false);
      }
    }
    // Prefixes are what is shown of them.
    const family = JSON.parse(texts[0] as string) as FamilyDocument;
    expect(family.devices.map((d) => d.key_prefix)).toContain(
      (seeded.secrets['device key'] as string).slice(0, 'svcdev_'.length + 8),
    );
    expect(family.mcp_tokens[0]?.token_prefix).toBe(
      (seeded.secrets['MCP token'] as string).slice(0, 'svcmcp_'.length + 8),
    );
    expect(family.connections.every((c) => c.has_credentials === true)).toBe(true);
  });

  it("a child's export holds that child only, with the family's entries about it", async () => {
    const { familyId, childId, otherChildId } = seeded;
    const { res, document } = await exported(
      `/api/v1/children/${childId}/export`,
      seeded.owner.auth,
    );
    expect(Object.keys(document)).toEqual([
      'exported_at',
      'family',
      'children',
      'policies',
      'devices',
      'device_reports',
      'enforcement_jobs',
      'viewing_history',
      'audit_log',
    ]);
    expect(document.family.id).toBe(familyId);
    expect(document.children.map((child) => child.id)).toEqual([childId]);
    expect(document.children[0]?.age_signals).toHaveLength(1);
    for (const part of [
      document.policies,
      document.devices,
      document.device_reports,
      document.enforcement_jobs,
      document.viewing_history,
    ]) {
      expect(part.length).toBeGreaterThan(0);
      expect(part.every((row) => row.child_id === childId)).toBe(true);
    }
    expect(document.viewing_history.map((v) => v.title).sort()).toEqual(['Bluey', 'Paddington']);
    // Nothing of the other child: not its id, nor its policy's, device's or entries.
    const family = (await exported(`/api/v1/families/${familyId}/export`, seeded.owner.auth))
      .document;
    const othersIds = [
      otherChildId,
      ...family.policies.filter((p) => p.child_id === otherChildId).map((p) => p.id),
      ...family.devices.filter((d) => d.child_id === otherChildId).map((d) => d.id),
    ];
    for (const id of othersIds) {
      expect(res.body.includes(id), id).toBe(false);
    }
    const own = new Set([
      childId,
      ...document.policies.map((p) => p.id),
      ...document.devices.map((d) => d.id),
      ...document.children.flatMap((c) => c.age_signals.map((s) => s.id)),
      ...document.enforcement_jobs.map((j) => j.id),
    ]);
    expect(document.audit_log.length).toBeGreaterThan(0);
    expect(document.audit_log.every((entry) => own.has(entry.target.id))).toBe(true);
    expect(document.audit_log).toEqual(
      family.audit_log.filter((entry) => own.has(entry.target.id)),
    );
    expect(document.audit_log.some((entry) => entry.action === 'child.updated')).toBe(true);
  });

  it('answers owners, parents and keys with read:families; refuses everyone else', async () => {
    const { familyId, childId } = seeded;
    const paths = [`/families/${familyId}/export`, `/children/${childId}/export`];
    const status = async (path: string, headers: Record<string, string>, prefix = '/api/v1') => {
      const res = await t.app.inject({ url: `${prefix}${path}`, headers });
      return { status: res.statusCode, message: res.statusCode === 200 ? '' : res.json().message };
    };
    const stranger = await newSession(t.app);
    const strangerOnFamily = (
      await t.app.inject({ url: `/api/v1/families/${familyId}`, headers: stranger.auth })
    ).statusCode;
    const otherOwner = await newSession(t.app);
    const otherKey = await mintKey(t.app, otherOwner, (await createOrg(t.app, otherOwner)).id);
    // Keys of the family's own org: one short of read:families, one with it alone.
    const narrow = await mintKey(t.app, seeded.owner, seeded.orgId, {
      scopes: ['read:children', 'write:families'],
    });
    const familiesOnly = await mintKey(t.app, seeded.owner, seeded.orgId, {
      scopes: ['read:families'],
    });
    for (const path of paths) {
      expect(await status(path, seeded.owner.auth)).toEqual({ status: 200, message: '' });
      expect(await status(path, seeded.parent.auth)).toEqual({ status: 200, message: '' });
      expect(await status(path, bearer(familiesOnly.key), '/api/v1/developer')).toEqual({
        status: 200,
        message: '',
      });
      expect(await status(path, seeded.guardian.auth)).toEqual({
        status: 403,
        message: 'insufficient role for this action',
      });
      // A stranger is answered as the family's own routes answer it.
      expect((await status(path, stranger.auth)).status).toBe(strangerOnFamily);
      expect((await status(path, bearer(otherKey.key), '/api/v1/developer')).status).toBe(404);
      expect(await status(path, bearer(narrow.key), '/api/v1/developer')).toEqual({
        status: 403,
        message: 'missing required scope: read:families',
      });
      expect(await status(path, {}, '/api/v1/developer')).toEqual({
        status: 403,
        message: 'no API scopes in context',
      });
    }
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await status(`/families/${unknown}/export`, seeded.owner.auth)).toEqual({
      status: 404,
      message: 'family not found',
    });
    expect(await status(`/children/${unknown}/export`, seeded.owner.auth)).toEqual({
      status: 404,
      message: 'child not found',
    });
    expect((await status('/families/not-a-uuid/export', seeded.owner.auth)).status).toBe(400);
  });

  it('is a JSON download, on both surfaces, an Idempotency-Key changing nothing', async () => {
    const cases = [
      {
        url: `/api/v1/families/${seeded.familyId}/export`,
        headers: seeded.owner.auth,
        filename: `haven-family-${seeded.familyId}.json`,
      },
      {
        url: `/api/v1/developer/families/${seeded.familyId}/export`,
        headers: bearer(seeded.key.key),
        filename: `haven-family-${seeded.familyId}.json`,
      },
      {
        url: `/api/v1/children/${seeded.childId}/export`,
        headers: { ...seeded.owner.auth, 'idempotency-key': 'export-1' },
        filename: `haven-child-${seeded.childId}.json`,
      },
      {
        url: `/api/v1/developer/children/${seeded.childId}/export`,
        headers: { ...bearer(seeded.key.key), 'idempotency-key': 'export-1' },
        filename: `haven-child-${seeded.childId}.json`,
      },
    ];
    for (const { url, headers, filename } of cases) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await t.app.inject({ url, headers });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.headers['content-disposition']).toBe(`attachment; filename="${filename}"`);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['x-request-id']).toEqual(expect.any(String));
        expect(res.headers['ocss-replay']).toBeUndefined();
        expect(() => JSON.parse(res.body)).not.toThrow();
      }
    }
  });

  it('documents both operations, tagged for the SDK, their 200 a JSON object', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const family = doc.paths['/api/v1/families/{familyID}/export'].get;
    const child = doc.paths['/api/v1/children/{childID}/export'].get;
    expect([family.operationId, family.tags]).toEqual(['exportFamily', ['Families']]);
    expect([child.operationId, child.tags]).toEqual(['exportChild', ['Children']]);
    expect(doc.paths['/api/v1/developer/families/{familyID}/export'].get.operationId).toBe(
      'developerExportFamily',
    );
    const schema = family.responses['200'].content['application/json'].schema;
    const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1)] : schema;
    expect(resolved.type).toBe('object');
    expect(Object.keys(resolved.properties)).toContain('audit_log');
    expect(family.responses['200'].headers).toHaveProperty('content-disposition');
  });

  it('ends the connection when a failure comes after the answer began, and logs it', async () => {
    const owner = await newSession(t.app);
    const made = await call(owner.auth)('POST', '/setup/quick', {
      child_name: 'Cy',
      birth_date: '2017-02-03',
    });
    // A stored value no Date holds: the policies part cannot be written, once the answer began.
    await sql`update policies set updated_at = 'infinity' where id = ${made.policy.id}`.execute(
      t.database.handle.db,
    );
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/families/${made.family.id}/export`, {
      headers: owner.auth,
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let received = '';
    const decoder = new TextDecoder();
    const outcome = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          return 'complete';
        }
        received += decoder.decode(value, { stream: true });
      }
    })().catch((error: Error) => error);
    expect(outcome).toBeInstanceOf(Error);
    // What had left before the failure (here the first piece; the rest waits for a full one).
    expect(received.startsWith('{')).toBe(true);
    expect(() => JSON.parse(received)).toThrow();
    const logged = t.logs.find(
      (line) => line.msg === 'export failed mid-stream: the download is cut short',
    );
    expect(logged).toMatchObject({ level: 50, export: `haven-family-${made.family.id}.json` });
  });
});
