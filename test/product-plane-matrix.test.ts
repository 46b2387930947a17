// Every product route of CONTRACT.md §7 and §8, both forms: `/api/v1` with a session and
// `/api/v1/developer` with an API key holding exactly the row's scope. Per row: the success
// status and shape, 403 naming the scope a key lacks, 403 `no API scopes in context` without
// an svc_ key on the developer form, and, for routes that take an id, the tenant wall:
// another org's key gets 404; another user's session, another user's MCP token and another
// sandbox session get 403/404; none of them changes a single row. A new product route joins
// by adding a row here.

import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../src/auth/scopes.js';
import { RULE_REGISTRY } from '../src/modules/rules/registry.js';
import { buildTestApp, type TestApp } from './app.js';
import { deviceAgent } from './devices.js';
import {
  bearer,
  createOrg,
  longSession,
  type MintedKey,
  mintKey,
  newSession,
  type Session,
} from './identity.js';

/** Fresh resources for one request (a DELETE must not starve the next row). */
interface Made {
  familyId: string;
  childId: string;
  policyId: string;
  /** A guardian member (another user), free to be changed or removed. */
  memberId: string;
  /** A user who is not yet a member. */
  outsiderId: string;
  connectionId: string;
  deviceId: string;
  webhookId: string;
  deliveryId: string;
  jobId: string;
}

interface Row {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the prefix, with ids filled in. */
  path(made: Made): string;
  body?(made: Made): unknown;
  /** undefined: open to any caller (no scope). */
  scope?: (typeof SCOPES)[number];
  status: number;
  /** Fields every success body has (for arrays: every element). */
  fields?: string[];
  /** Answers with an id of its own resource kind, so another org's id gives 404. */
  idRoute: boolean;
}

function defaultConfigOf(category: string): Record<string, unknown> {
  const entry = RULE_REGISTRY.find((candidate) => candidate.category === category);
  if (!entry) {
    throw new Error(`${category} is not in the registry`);
  }
  return entry.default_config;
}

const POLICY = [
  'id',
  'child_id',
  'name',
  'status',
  'priority',
  'version',
  'strictness',
  'created_at',
  'updated_at',
];
const RULE = [
  'id',
  'policy_id',
  'category',
  'enabled',
  'config',
  'origin',
  'created_at',
  'updated_at',
];
const CHILD = ['id', 'family_id', 'name', 'birth_date', 'created_at', 'updated_at'];
const FAMILY = ['id', 'name', 'created_at', 'updated_at'];
const MEMBER = ['id', 'family_id', 'user_id', 'role', 'joined_at'];
const CONNECTION = [
  'id',
  'family_id',
  'platform_id',
  'status',
  'created_at',
  'last_enforcement_at',
  'last_enforcement_status',
];
const AGE_RATINGS = ['age', 'age_group', 'max_ratings'];
const AGE_SIGNAL = [
  'id',
  'child_id',
  'source',
  'age_lower',
  'age_upper',
  'method',
  'observed_at',
  'created_at',
];
const JOB = [
  'id',
  'child_id',
  'policy_id',
  'policy_version',
  'trigger_type',
  'status',
  'created_at',
  'started_at',
  'completed_at',
  'results',
];
const DEVICE = ['id', 'child_id', 'device_name', 'status', 'last_seen_at', 'created_at'];
const WEBHOOK = ['id', 'family_id', 'url', 'events', 'active', 'created_at', 'updated_at'];
const DELIVERY = [
  'id',
  'webhook_id',
  'message_id',
  'event',
  'status',
  'response_code',
  'attempt',
  'next_retry_at',
  'created_at',
];
const VIEWING = ['id', 'child_id', 'platform', 'title', 'watched_at', 'rating'];
const CHILD_EXPORT = [
  'exported_at',
  'family',
  'children',
  'policies',
  'devices',
  'device_reports',
  'enforcement_jobs',
  'viewing_history',
  'audit_log',
];
const FAMILY_EXPORT = [
  ...CHILD_EXPORT,
  'members',
  'connections',
  'webhooks',
  'deliveries',
  'mcp_tokens',
];
/** Never reached: the matrix app runs no workers, so nothing is ever sent there. */
const HOOK_URL = 'http://127.0.0.1:9/hooks';

const ROWS: Row[] = [
  {
    method: 'POST',
    path: () => '/families',
    body: () => ({ name: 'Matrix' }),
    scope: 'write:families',
    status: 201,
    fields: FAMILY,
    idRoute: false,
  },
  {
    method: 'GET',
    path: () => '/families',
    scope: 'read:families',
    status: 200,
    fields: FAMILY,
    idRoute: false,
  },
  {
    method: 'GET',
    path: (m) => `/families/${m.familyId}`,
    scope: 'read:families',
    status: 200,
    fields: FAMILY,
    idRoute: true,
  },
  {
    method: 'PATCH',
    path: (m) => `/families/${m.familyId}`,
    body: () => ({ name: 'Renamed' }),
    scope: 'write:families',
    status: 200,
    fields: FAMILY,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/families/${m.familyId}`,
    scope: 'write:families',
    status: 204,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/families/${m.familyId}/members`,
    scope: 'read:families',
    status: 200,
    fields: MEMBER,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/families/${m.familyId}/members`,
    body: (m) => ({ user_id: m.outsiderId, role: 'parent' }),
    scope: 'write:families',
    status: 201,
    fields: MEMBER,
    idRoute: true,
  },
  {
    method: 'PATCH',
    path: (m) => `/families/${m.familyId}/members/${m.memberId}`,
    body: () => ({ role: 'parent' }),
    scope: 'write:families',
    status: 200,
    fields: MEMBER,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/families/${m.familyId}/members/${m.memberId}`,
    scope: 'write:families',
    status: 204,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/families/${m.familyId}/children`,
    body: () => ({ name: 'Kid', birth_date: '2015-03-04' }),
    scope: 'write:children',
    status: 201,
    fields: CHILD,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/families/${m.familyId}/children`,
    scope: 'read:children',
    status: 200,
    fields: CHILD,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}`,
    scope: 'read:children',
    status: 200,
    fields: CHILD,
    idRoute: true,
  },
  {
    method: 'PATCH',
    path: (m) => `/children/${m.childId}`,
    body: () => ({ name: 'Kiddo' }),
    scope: 'write:children',
    status: 200,
    fields: CHILD,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/children/${m.childId}`,
    scope: 'write:children',
    status: 204,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/families/${m.familyId}/export`,
    scope: 'read:families',
    status: 200,
    fields: FAMILY_EXPORT,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}/export`,
    scope: 'read:families',
    status: 200,
    fields: CHILD_EXPORT,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}/age-ratings`,
    scope: 'read:ratings',
    status: 200,
    fields: AGE_RATINGS,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/children/${m.childId}/age-signals`,
    body: () => ({ source: 'parent_declared', age_lower: 10, age_upper: 12 }),
    scope: 'write:children',
    status: 201,
    fields: AGE_SIGNAL,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}/age-signals`,
    scope: 'read:children',
    status: 200,
    fields: AGE_SIGNAL,
    idRoute: true,
  },
  {
    method: 'GET',
    path: () => '/rules/categories',
    status: 200,
    fields: [
      'category',
      'group',
      'name',
      'description',
      'config_schema',
      'default_config',
      'engagement',
      'capabilities',
    ],
    idRoute: false,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}/policies`,
    scope: 'read:policies',
    status: 200,
    fields: POLICY,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/children/${m.childId}/policies`,
    body: () => ({ name: 'Weekend' }),
    scope: 'write:policies',
    status: 201,
    fields: POLICY,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/policies/${m.policyId}`,
    scope: 'read:policies',
    status: 200,
    fields: POLICY,
    idRoute: true,
  },
  {
    method: 'PATCH',
    path: (m) => `/policies/${m.policyId}`,
    body: () => ({ priority: 3 }),
    scope: 'write:policies',
    status: 200,
    fields: POLICY,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/policies/${m.policyId}`,
    scope: 'write:policies',
    status: 204,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/policies/${m.policyId}/pause`,
    scope: 'write:policies',
    status: 200,
    fields: POLICY,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/policies/${m.policyId}/activate`,
    scope: 'write:policies',
    status: 200,
    fields: POLICY,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/policies/${m.policyId}/generate-from-age`,
    body: () => ({ strictness: 'strict' }),
    scope: 'write:policies',
    status: 200,
    fields: RULE,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/policies/${m.policyId}/rules`,
    scope: 'read:policies',
    status: 200,
    fields: RULE,
    idRoute: true,
  },
  {
    method: 'PUT',
    path: (m) => `/policies/${m.policyId}/rules/dm_restriction`,
    body: () => ({ enabled: true, config: { mode: 'contacts_only' } }),
    scope: 'write:policies',
    status: 200,
    fields: RULE,
    idRoute: true,
  },
  {
    method: 'PUT',
    path: (m) => `/policies/${m.policyId}/rules`,
    body: () => ({
      rules: [
        { category: 'web_safesearch', enabled: true, config: defaultConfigOf('web_safesearch') },
      ],
    }),
    scope: 'write:policies',
    status: 200,
    fields: RULE,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/policies/${m.policyId}/rules/dm_restriction`,
    scope: 'write:policies',
    status: 204,
    idRoute: true,
  },
  {
    method: 'GET',
    path: () => '/ratings/systems',
    scope: 'read:ratings',
    status: 200,
    fields: ['id', 'name', 'country', 'media_type', 'description'],
    idRoute: false,
  },
  {
    method: 'GET',
    path: () => '/ratings/systems/esrb',
    scope: 'read:ratings',
    status: 200,
    fields: ['id', 'ratings'],
    idRoute: false,
  },
  {
    method: 'GET',
    path: () => '/ratings/by-age?age=9',
    scope: 'read:ratings',
    status: 200,
    fields: AGE_RATINGS,
    idRoute: false,
  },
  {
    method: 'GET',
    path: () => '/platforms',
    scope: 'read:platforms',
    status: 200,
    fields: [
      'platform_id',
      'id',
      'name',
      'category',
      'tier',
      'auth_type',
      'capabilities',
      'description',
    ],
    idRoute: false,
  },
  {
    method: 'GET',
    path: () => '/platforms/nextdns',
    scope: 'read:platforms',
    status: 200,
    fields: ['platform_id', 'capabilities'],
    idRoute: false,
  },
  {
    method: 'POST',
    path: () => '/setup/quick',
    body: (m) => ({ family_id: m.familyId, child_name: 'Quick', birth_date: '2014-06-07' }),
    scope: 'write:families',
    status: 201,
    fields: ['family', 'child', 'policy', 'rules', 'age_group', 'max_ratings', 'rule_summary'],
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/families/${m.familyId}/connections`,
    body: () => ({ platform_id: 'roblox' }),
    scope: 'write:families',
    status: 201,
    fields: CONNECTION,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/families/${m.familyId}/connections`,
    scope: 'read:families',
    status: 200,
    fields: CONNECTION,
    idRoute: true,
  },
  {
    method: 'PATCH',
    path: (m) => `/connections/${m.connectionId}`,
    body: () => ({ credentials: { api_key: 'renewed', profile_id: 'abc123' } }),
    scope: 'write:families',
    status: 200,
    fields: CONNECTION,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/connections/${m.connectionId}`,
    scope: 'write:families',
    status: 204,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/children/${m.childId}/enforce`,
    body: () => ({}),
    scope: 'write:enforcement',
    status: 202,
    fields: JOB,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/enforcement/jobs/${m.jobId}`,
    scope: 'read:enforcement',
    status: 200,
    fields: JOB,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}/enforcement/jobs?limit=5`,
    scope: 'read:enforcement',
    status: 200,
    fields: JOB,
    idRoute: true,
  },
  {
    method: 'GET',
    path: () => '/enforce/history?limit=5&offset=0',
    scope: 'read:enforcement',
    status: 200,
    fields: JOB,
    idRoute: false,
  },
  {
    method: 'POST',
    path: () => '/sandbox/platforms/nextdns/fail',
    body: (m) => ({ family_id: m.familyId, times: 1 }),
    scope: 'write:enforcement',
    status: 201,
    fields: ['family_id', 'platform_id', 'remaining', 'message'],
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/sandbox/platforms/nextdns/fail?family_id=${m.familyId}`,
    scope: 'write:enforcement',
    status: 204,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/children/${m.childId}/devices`,
    body: () => ({ device_name: 'Hall tablet', platform_id: 'android' }),
    scope: 'write:devices',
    status: 201,
    fields: ['device', 'device_key'],
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/children/${m.childId}/devices`,
    scope: 'read:devices',
    status: 200,
    fields: DEVICE,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/devices/${m.deviceId}`,
    scope: 'write:devices',
    status: 204,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/viewing-history/${m.childId}?limit=10&offset=0`,
    scope: 'read:children',
    status: 200,
    fields: VIEWING,
    idRoute: true,
  },
  {
    method: 'POST',
    path: () => '/webhooks',
    body: (m) => ({ family_id: m.familyId, url: HOOK_URL, events: ['child.created'] }),
    scope: 'write:webhooks',
    status: 201,
    fields: [...WEBHOOK, 'secret'],
    idRoute: true,
  },
  {
    method: 'GET',
    path: () => '/webhooks',
    scope: 'read:webhooks',
    status: 200,
    fields: WEBHOOK,
    idRoute: false,
  },
  {
    method: 'GET',
    path: (m) => `/webhooks/${m.webhookId}`,
    scope: 'read:webhooks',
    status: 200,
    fields: WEBHOOK,
    idRoute: true,
  },
  {
    method: 'PATCH',
    path: (m) => `/webhooks/${m.webhookId}`,
    body: () => ({ events: ['policy.updated', 'test'] }),
    scope: 'write:webhooks',
    status: 200,
    fields: WEBHOOK,
    idRoute: true,
  },
  {
    method: 'DELETE',
    path: (m) => `/webhooks/${m.webhookId}`,
    scope: 'write:webhooks',
    status: 204,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/webhooks/${m.webhookId}/test`,
    scope: 'write:webhooks',
    status: 202,
    fields: DELIVERY,
    idRoute: true,
  },
  {
    method: 'GET',
    path: (m) => `/webhooks/${m.webhookId}/deliveries?limit=10`,
    scope: 'read:webhooks',
    status: 200,
    fields: DELIVERY,
    idRoute: true,
  },
  {
    method: 'POST',
    path: (m) => `/webhooks/${m.webhookId}/deliveries/${m.deliveryId}/retry`,
    scope: 'write:webhooks',
    status: 202,
    fields: DELIVERY,
    idRoute: true,
  },
];

const label = (row: Row) =>
  `${row.method} ${row.path({
    familyId: '{familyID}',
    childId: '{childID}',
    policyId: '{policyID}',
    memberId: '{memberID}',
    outsiderId: '',
    connectionId: '{connectionID}',
    deviceId: '{deviceID}',
    webhookId: '{id}',
    deliveryId: '{deliveryID}',
    jobId: '{jobID}',
  })}`;

describe('CONTRACT §7, row by row, in both forms', () => {
  let t: TestApp;
  let owner: Session;
  let orgKey: MintedKey;
  let otherOrgKey: MintedKey;
  /** An MCP token of another user, bound to that user's own family. */
  let otherMcpToken: string;
  const scopedKeys = new Map<string, MintedKey>();
  const allButKeys = new Map<string, MintedKey>();

  beforeAll(async () => {
    // No workers: nothing changes behind a case's back (queued jobs stay queued).
    t = await buildTestApp({ env: { WORKERS: 'off' } });
    owner = await longSession(t);
    const org = await createOrg(t.app, owner);
    orgKey = await mintKey(t.app, owner, org.id);
    const otherOwner = await newSession(t.app);
    otherOrgKey = await mintKey(
      t.app,
      otherOwner,
      (await createOrg(t.app, otherOwner, 'Other')).id,
    );
    const mcpOwner = await newSession(t.app);
    const mcpFamily = await t.app.inject({
      method: 'POST',
      url: '/api/v1/families',
      headers: mcpOwner.auth,
      payload: { name: 'MCP family' },
    });
    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: mcpOwner.auth,
      payload: { family_id: mcpFamily.json().id, label: 'matrix' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    otherMcpToken = minted.json().plain;
    for (const scope of SCOPES) {
      scopedKeys.set(scope, await mintKey(t.app, owner, org.id, { scopes: [scope] }));
      allButKeys.set(
        scope,
        await mintKey(t.app, owner, org.id, { scopes: SCOPES.filter((s) => s !== scope) }),
      );
    }
  });
  afterAll(() => t.close());
  // Each case in a fresh rate-limit minute: this file checks routes, not the limiter.
  beforeEach(() => t.clock.advance(61_000));

  /**
   * Every row of the product tables, as one digest per table computed in the database: what
   * a refused request must leave exactly as it was. A device's last_seen_at is activity,
   * flushed from memory every few seconds whatever the request under test does.
   */
  async function snapshot(): Promise<string> {
    const tables = [
      'families',
      'family_members',
      'children',
      'policies',
      'policy_rules',
      'family_connections',
      'enforcement_jobs',
      'sandbox_platform_failures',
      'devices',
      'device_reports',
      'viewing_history',
      'webhooks',
      'webhook_deliveries',
      'age_signals',
    ] as const;
    const digests = tables
      .map(
        (table) =>
          `(select md5(coalesce(string_agg(r, ',' order by r), '')) from ` +
          `(select (to_jsonb(t) - 'last_seen_at')::text as r from ${table} t) rows) as ${table}`,
      )
      .join(', ');
    const { rows } = await sql.raw(`select ${digests}`).execute(t.database.handle.db);
    return JSON.stringify(rows);
  }

  /**
   * Fixtures for requests that must be refused: made once per caller and shared, since a
   * refusal changes nothing (each case checks exactly that; a case that did change something
   * fails on its snapshot before anyone else relies on the fixture).
   */
  const refusalFixtures = new Map<string, Promise<Made>>();
  function refusalFixture(prefix: string, headers: Record<string, string>): Promise<Made> {
    const key = `${prefix} ${JSON.stringify(headers)}`;
    let made = refusalFixtures.get(key);
    if (!made) {
      made = make(prefix, headers);
      refusalFixtures.set(key, made);
    }
    return made;
  }

  /** A family with a child and its active policy, made by this caller on this prefix. */
  async function make(prefix: string, headers: Record<string, string>): Promise<Made> {
    const setup = await t.app.inject({
      method: 'POST',
      url: `${prefix}/setup/quick`,
      headers,
      payload: { child_name: 'Matrix Kid', birth_date: '2015-01-02' },
    });
    expect(setup.statusCode, setup.body).toBe(201);
    const body = setup.json();
    const member = await t.app.inject({
      method: 'POST',
      url: `${prefix}/families/${body.family.id}/members`,
      headers,
      payload: { user_id: (await newSession(t.app)).userId, role: 'guardian' },
    });
    expect(member.statusCode, member.body).toBe(201);
    const connection = await t.app.inject({
      method: 'POST',
      url: `${prefix}/families/${body.family.id}/connections`,
      headers,
      payload: { platform_id: 'nextdns', credentials: { api_key: 'k', profile_id: 'abc123' } },
    });
    expect(connection.statusCode, connection.body).toBe(201);
    const created = async (method: 'POST', url: string, payload: object, status: number) => {
      const res = await t.app.inject({ method, url: `${prefix}${url}`, headers, payload });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
      return res.json();
    };
    const webhook = await created(
      'POST',
      '/webhooks',
      { family_id: body.family.id, url: HOOK_URL, events: ['*'] },
      201,
    );
    const delivery = await created('POST', `/webhooks/${webhook.id}/test`, {}, 202);
    const device = await created(
      'POST',
      `/children/${body.child.id}/devices`,
      { device_name: 'Phone' },
      201,
    );
    const report = await deviceAgent(t).report(device.device_key, {
      report_type: 'viewing',
      reported_at: '2026-01-15T11:00:00Z',
      payload: { platform: 'netflix', title: 'Matrix Movie', watched_at: '2026-01-15T10:00:00Z' },
    });
    expect(report.statusCode, report.body).toBe(202);
    // A range the child's age (11) lies in: nothing is re-derived.
    await created(
      'POST',
      `/children/${body.child.id}/age-signals`,
      { source: 'parent_declared', age_lower: 10, age_upper: 12 },
      201,
    );
    const job = await created('POST', `/children/${body.child.id}/enforce`, {}, 202);
    return {
      deviceId: device.device.id,
      webhookId: webhook.id,
      deliveryId: delivery.id,
      jobId: job.id,
      connectionId: connection.json().id,
      familyId: body.family.id,
      childId: body.child.id,
      policyId: body.policy.id,
      memberId: member.json().id,
      outsiderId: (await newSession(t.app)).userId,
    };
  }

  function request(
    row: Row,
    prefix: string,
    made: Made,
    headers: Record<string, string>,
  ): InjectOptions {
    const body = row.body?.(made);
    return {
      method: row.method,
      url: `${prefix}${row.path(made)}`,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    };
  }

  function expectShape(row: Row, res: { statusCode: number; body: string; json(): unknown }): void {
    expect(res.statusCode, `${label(row)}: ${res.body}`).toBe(row.status);
    if (!row.fields) {
      expect(res.body).toBe('');
      return;
    }
    const json = res.json();
    const items = Array.isArray(json) ? json : [json];
    expect(items.length, label(row)).toBeGreaterThan(0);
    for (const item of items) {
      for (const field of row.fields) {
        expect(item, `${label(row)} lacks ${field}`).toHaveProperty(field);
      }
    }
  }

  for (const row of ROWS) {
    describe(label(row), () => {
      it('/api/v1 with a session: the contract status and shape', async () => {
        const made = await make('/api/v1', owner.auth);
        expectShape(row, await t.app.inject(request(row, '/api/v1', made, owner.auth)));
      });

      it(`/api/v1/developer with a key scoped to ${row.scope ?? 'nothing'}: the same`, async () => {
        const made = await make('/api/v1/developer', bearer(orgKey.key));
        const key = row.scope ? (scopedKeys.get(row.scope) as MintedKey) : otherOrgKey;
        expectShape(
          row,
          await t.app.inject(request(row, '/api/v1/developer', made, bearer(key.key))),
        );
      });

      if (row.scope) {
        it('/api/v1/developer: 403 naming the scope a key lacks; 403 without an svc_ key', async () => {
          const made = await refusalFixture('/api/v1/developer', bearer(orgKey.key));
          const lacking = allButKeys.get(row.scope as string) as MintedKey;
          const refused = await t.app.inject(
            request(row, '/api/v1/developer', made, bearer(lacking.key)),
          );
          expect(refused.statusCode).toBe(403);
          expect(refused.json().message).toBe(`missing required scope: ${row.scope}`);
          for (const headers of [{}, owner.auth]) {
            const anonymous = await t.app.inject(request(row, '/api/v1/developer', made, headers));
            expect(anonymous.statusCode).toBe(403);
            expect(anonymous.json().message).toBe('no API scopes in context');
          }
        });
      }

      if (row.idRoute) {
        it("another org's key gets 404 and changes nothing", async () => {
          const made = await refusalFixture('/api/v1/developer', bearer(orgKey.key));
          const before = await snapshot();
          const res = await t.app.inject(
            request(row, '/api/v1/developer', made, bearer(otherOrgKey.key)),
          );
          expect(res.statusCode, res.body).toBe(404);
          expect(await snapshot()).toBe(before);
        });

        it("another user's session gets 403 or 404 and changes nothing", async () => {
          const made = await refusalFixture('/api/v1', owner.auth);
          const stranger = await newSession(t.app);
          const before = await snapshot();
          const res = await t.app.inject(request(row, '/api/v1', made, stranger.auth));
          expect([403, 404], res.body).toContain(res.statusCode);
          expect(await snapshot()).toBe(before);
        });

        it("another user's MCP token gets 403 or 404 and changes nothing", async () => {
          const made = await refusalFixture('/api/v1', owner.auth);
          const before = await snapshot();
          const res = await t.app.inject(request(row, '/api/v1', made, bearer(otherMcpToken)));
          expect([403, 404], res.body).toContain(res.statusCode);
          expect(await snapshot()).toBe(before);
        });

        it('another sandbox session gets 403 or 404 and changes nothing', async () => {
          const made = await refusalFixture('/api/v1', { 'x-sandbox-session': 'matrix-alice' });
          const before = await snapshot();
          const res = await t.app.inject(
            request(row, '/api/v1', made, { 'x-sandbox-session': 'matrix-mallory' }),
          );
          expect([403, 404], res.body).toContain(res.statusCode);
          expect(await snapshot()).toBe(before);
        });
      }
    });
  }
});
