// The MCP server (CONTRACT.md §10.1) through the official SDK's Client and its
// Streamable HTTP transport, against a listening server: the tools of §10.1 with valid
// schemas, a child protected end to end through them, the family wall, every auth failure,
// and what is not JSON-RPC.
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import { newSession, type Session } from '../../../test/identity.js';
import { injectFailure } from '../../../test/injected-failure.js';
import { DEMO_CHILDREN, DEMO_FAMILY_ID } from '../demo/demo-family.js';

const CONTRACT_TOOLS = [
  'get_family',
  'list_children',
  'get_child',
  'create_child',
  'update_child',
  'delete_child',
  'list_policies',
  'get_policy',
  'activate_policy',
  'pause_policy',
  'generate_policy_from_age',
  'set_rule',
  'delete_rule',
  'list_rule_categories',
  'get_ratings_for_age',
  'list_platforms',
  'list_connections',
  'connect_platform',
  'disconnect_platform',
  'enforce_policy',
  'get_enforcement_job',
  'list_enforcement_jobs',
  'list_devices',
  'get_viewing_history',
  'quick_setup_child',
];

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A JSON body, as loosely typed as JSON.parse's. */
const jsonOf = async (res: Response): Promise<ReturnType<typeof JSON.parse>> => res.json();

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
};

describe('the MCP server at POST /mcp', () => {
  let t: TestApp;
  let base = '';
  let alice: Session;
  let bob: Session;
  let aliceFamily = '';
  let bobChild = '';
  let token = '';
  const clients: Client[] = [];

  async function family(session: Session, name: string) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/setup/quick',
      headers: session.auth,
      payload: { child_name: name, birth_date: '2016-04-05' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { family: { id: string }; child: { id: string } };
  }

  async function mint(session: Session, familyId: string): Promise<{ id: string; plain: string }> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: session.auth,
      payload: { family_id: familyId, label: 'assistant' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return { id: res.json().token.id, plain: res.json().plain };
  }

  async function connect(secret: string): Promise<Client> {
    const client = new Client({ name: 'haven-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${secret}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
    return (await client.callTool({ name, arguments: args })) as ToolResult;
  }

  function ok(result: ToolResult) {
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    return result.structuredContent as ReturnType<typeof JSON.parse>;
  }

  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    t.config.publicBaseUrl = base;
    alice = await newSession(t.app);
    bob = await newSession(t.app);
    aliceFamily = (await family(alice, 'Ada')).family.id;
    bobChild = (await family(bob, 'Bo')).child.id;
    token = (await mint(alice, aliceFamily)).plain;
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await t.close();
  });

  it('lists the tools of §10.1, each with valid input and output schemas and annotations', async () => {
    const client = await connect(token);
    expect(client.getServerVersion()?.name).toBe('haven');
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(CONTRACT_TOOLS));
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    for (const tool of tools) {
      // Written for a model: a sentence or more saying what the tool does and changes.
      expect(tool.description, tool.name).toMatch(/^[A-Z].{40,}[.)]$/s);
      expect(tool.title, tool.name).toMatch(/^[A-Z]/);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
      expect(() => ajv.compile(tool.outputSchema as object), tool.name).not.toThrow();
      expect(tool.annotations, tool.name).toMatchObject({
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
      });
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('get_family')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('delete_child')?.annotations?.destructiveHint).toBe(true);
    expect(byName.get('set_rule')?.inputSchema.required).toEqual(
      expect.arrayContaining(['policy_id', 'category', 'enabled', 'config']),
    );
    // family_id defaults to the token's family, so it is never required.
    expect(byName.get('list_children')?.inputSchema.required ?? []).not.toContain('family_id');
  });

  it('protects a child end to end through the tools', async () => {
    const client = await connect(token);
    expect(ok(await call(client, 'get_family')).id).toBe(aliceFamily);
    const setup = ok(
      await call(client, 'quick_setup_child', {
        child_name: 'Cyd',
        birth_date: '2013-09-10',
        idempotency_key: 'cyd-once',
      }),
    );
    expect(setup.family.id).toBe(aliceFamily);
    expect(setup.rules).toHaveLength(20);
    const childId = setup.child.id as string;
    // The same idempotency key: the same child, not a second one.
    const replay = ok(
      await call(client, 'quick_setup_child', {
        child_name: 'Cyd',
        birth_date: '2013-09-10',
        idempotency_key: 'cyd-once',
      }),
    );
    expect(replay.child.id).toBe(childId);

    const children = ok(await call(client, 'list_children')).items as Array<{ id: string }>;
    expect(children.map((c) => c.id)).toContain(childId);
    expect(ok(await call(client, 'get_child', { child_id: childId })).name).toBe('Cyd');
    expect(ok(await call(client, 'update_child', { child_id: childId, name: 'Cydney' })).name).toBe(
      'Cydney',
    );
    const policies = ok(await call(client, 'list_policies', { child_id: childId })).items as Array<{
      id: string;
      status: string;
    }>;
    const policyId = policies[0]?.id as string;
    expect(ok(await call(client, 'get_policy', { policy_id: policyId })).status).toBe('active');
    const rules = ok(await call(client, 'list_rules', { policy_id: policyId })).items;
    expect(rules).toHaveLength(20);
    const categories = ok(await call(client, 'list_rule_categories')).items;
    expect(categories).toHaveLength(123);
    expect(
      ok(
        await call(client, 'set_rule', {
          policy_id: policyId,
          category: 'web_custom_blocklist',
          enabled: true,
          config: { domains: ['games.example'] },
        }),
      ).config,
    ).toEqual({ domains: ['games.example'] });
    const refused = await call(client, 'set_rule', {
      policy_id: policyId,
      category: 'web_custom_blocklist',
      enabled: true,
      config: { domains: 'not a list' },
    });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toMatch(/^400 /);
    expect(
      ok(
        await call(client, 'delete_rule', {
          policy_id: policyId,
          category: 'web_custom_blocklist',
        }),
      ),
    ).toEqual({});
    expect(ok(await call(client, 'get_ratings_for_age', { age: 13 })).age).toBe(13);
    expect(ok(await call(client, 'list_platforms')).items).toHaveLength(22);
    const connection = ok(await call(client, 'connect_platform', { platform_id: 'nextdns' }));
    expect(connection.status).toBe('connected');
    expect(ok(await call(client, 'list_connections')).items).toHaveLength(1);
    const job = ok(await call(client, 'enforce_policy', { child_id: childId }));
    let status = job.status as string;
    const deadline = Date.now() + 15_000;
    while (['pending', 'running'].includes(status) && Date.now() < deadline) {
      status = ok(await call(client, 'get_enforcement_job', { job_id: job.id })).status;
    }
    expect(status).toBe('completed');
    expect(
      ok(await call(client, 'list_enforcement_jobs', { child_id: childId })).items.length,
    ).toBeGreaterThan(0);
    expect(ok(await call(client, 'list_devices', { child_id: childId })).items).toEqual([]);
    expect(ok(await call(client, 'get_viewing_history', { child_id: childId })).items).toEqual([]);
    expect(ok(await call(client, 'pause_policy', { policy_id: policyId })).status).toBe('paused');
    expect(ok(await call(client, 'activate_policy', { policy_id: policyId })).status).toBe(
      'active',
    );
    expect(
      ok(
        await call(client, 'generate_policy_from_age', {
          policy_id: policyId,
          strictness: 'strict',
        }),
      ),
    ).toBeDefined();
    expect(ok(await call(client, 'disconnect_platform', { connection_id: connection.id }))).toEqual(
      {},
    );
    const made = ok(await call(client, 'create_child', { name: 'Dee', birth_date: '2019-01-01' }));
    expect(ok(await call(client, 'delete_child', { child_id: made.id }))).toEqual({});
    const gone = await call(client, 'get_child', { child_id: made.id });
    expect(gone).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: '404 child not found' }],
    });
  });

  it('answers every id of another family as not found, on every tool, and changes nothing', async () => {
    const client = await connect(token);
    // Bob's family has one of everything a tool can be pointed at.
    const bobAuth = { ...bob.auth, 'content-type': 'application/json' };
    const bobGet = async (url: string) => (await t.app.inject({ url, headers: bob.auth })).json();
    const bobPost = async (url: string, payload: object) =>
      (await t.app.inject({ method: 'POST', url, headers: bobAuth, payload })).json();
    const bobFamily = (await bobGet(`/api/v1/children/${bobChild}`)).family_id as string;
    const policy = (await bobGet(`/api/v1/children/${bobChild}/policies`))[0].id as string;
    const connection = (
      await bobPost(`/api/v1/families/${bobFamily}/connections`, { platform_id: 'nextdns' })
    ).id as string;
    const job = (await bobPost(`/api/v1/children/${bobChild}/enforce`, {})).id as string;
    // Bob's own job finishes first: its result is a change to his connection the snapshot
    // below must not mistake for one the tools made.
    const deadline = Date.now() + 15_000;
    while (
      ['pending', 'running'].includes((await bobGet(`/api/v1/enforcement/jobs/${job}`)).status) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const ids: Record<string, string> = {
      family_id: bobFamily,
      child_id: bobChild,
      policy_id: policy,
      connection_id: connection,
      job_id: job,
    };
    const snapshot = async () =>
      JSON.stringify([
        await bobGet(`/api/v1/families/${bobFamily}`),
        await bobGet(`/api/v1/families/${bobFamily}/children`),
        await bobGet(`/api/v1/children/${bobChild}/policies`),
        await bobGet(`/api/v1/policies/${policy}/rules`),
        await bobGet(`/api/v1/families/${bobFamily}/connections`),
      ]);
    const before = await snapshot();

    const { tools } = await client.listTools();
    let tried = 0;
    for (const tool of tools) {
      const properties = Object.keys(tool.inputSchema.properties ?? {});
      const idArgs = properties.filter((name) => name in ids);
      if (idArgs.length === 0) {
        continue;
      }
      // Valid-looking arguments around the foreign id, so only the wall can refuse.
      const args: Record<string, unknown> = {
        name: 'Mallory',
        child_name: 'Mallory',
        birth_date: '2015-01-01',
        platform_id: 'xbox',
        category: 'web_safesearch',
        enabled: true,
        config: { enabled: true },
        source: 'parent_declared',
        age_upper: 12,
      };
      for (const name of Object.keys(args)) {
        if (!properties.includes(name)) {
          delete args[name];
        }
      }
      for (const name of idArgs) {
        args[name] = ids[name];
      }
      const result = await call(client, tool.name, args);
      tried++;
      expect(result.isError, `${tool.name}: ${result.content[0]?.text}`).toBe(true);
      expect(result.content[0]?.text, tool.name).toMatch(/^404 [a-z ]+ not found$/);
    }
    expect(tried).toBeGreaterThanOrEqual(20);
    expect(await snapshot()).toBe(before);
  });

  it('writes once through a tool retried with its idempotency_key after a crash before the answer', async () => {
    // The step after the write (recording the answer) fails, as a process killed there would
    // never take it: the tool call writes nothing, and its retry writes once.
    const restore = await injectFailure(t.database.handle.db, {
      name: 'probe_crash_on_mcp_answer',
      on: 'update',
      table: 'idempotency_keys',
      when: "new.key = 'dara-once' and new.state = 'completed'",
    });
    // A user of its own: the calls here must not spend the shared user's rate limit.
    const erin = await newSession(t.app);
    const client = await connect((await mint(erin, (await family(erin, 'Em')).family.id)).plain);
    const args = { name: 'Dara', birth_date: '2012-01-02', idempotency_key: 'dara-once' };
    const named = async () =>
      (ok(await call(client, 'list_children')).items as Array<{ name: string }>).filter(
        (child) => child.name === 'Dara',
      ).length;
    try {
      expect((await call(client, 'create_child', args)).isError).toBe(true);
      expect(await named()).toBe(0);
    } finally {
      await restore();
    }
    const created = ok(await call(client, 'create_child', args));
    expect(ok(await call(client, 'create_child', args)).id).toBe(created.id);
    expect(await named()).toBe(1);
  });

  it('on the sandbox demo family: every read tool answers, every write is 403 read-only', async () => {
    // A user of its own, whose rate bucket the calls below leave to itself.
    const dana = await newSession(t.app);
    const demo = await connect((await mint(dana, DEMO_FAMILY_ID)).plain);
    const child = DEMO_CHILDREN[1].id;
    const anonymous = async (url: string) => (await t.app.inject({ url })).json();
    const policy = (await anonymous(`/api/v1/children/${child}/policies`))[0].id as string;
    const snapshot = async () =>
      JSON.stringify([
        await anonymous(`/api/v1/families/${DEMO_FAMILY_ID}`),
        await anonymous(`/api/v1/families/${DEMO_FAMILY_ID}/children`),
        await anonymous(`/api/v1/children/${child}/policies`),
        await anonymous(`/api/v1/policies/${policy}/rules`),
        await anonymous(`/api/v1/families/${DEMO_FAMILY_ID}/connections`),
      ]);
    const before = await snapshot();

    expect(ok(await call(demo, 'get_family')).name).toBe('Rivera Family (demo)');
    const children = ok(await call(demo, 'list_children')).items as Array<{ id: string }>;
    expect(children.map((c) => c.id).sort()).toEqual(DEMO_CHILDREN.map((c) => c.id).sort());
    const read = await demo.readResource({ uri: 'haven://family' });
    expect(JSON.parse(String((read.contents[0] as { text?: string }).text)).family.id).toBe(
      DEMO_FAMILY_ID,
    );

    // Arguments that would make each tool succeed on a family its token may change.
    const ids: Record<string, string> = {
      family_id: DEMO_FAMILY_ID,
      child_id: child,
      policy_id: policy,
    };
    const valid: Record<string, unknown> = {
      name: 'Mallory',
      child_name: 'Mallory',
      birth_date: '2015-01-01',
      platform_id: 'nextdns',
      category: 'web_safesearch',
      enabled: true,
      config: { enabled: true },
      age: 10,
      source: 'parent_declared',
    };
    const { tools } = await demo.listTools();
    const reads: string[] = [];
    const writes: string[] = [];
    for (const tool of tools) {
      const properties = Object.keys(tool.inputSchema.properties ?? {});
      const required = tool.inputSchema.required ?? [];
      // The demo family has no connection, job or device to point a tool at.
      if (required.some((name) => !(name in ids) && !(name in valid))) {
        continue;
      }
      const args: Record<string, unknown> = {};
      for (const name of properties) {
        if (name in ids) {
          args[name] = ids[name];
        } else if (name in valid && (required.includes(name) || name === 'name')) {
          args[name] = valid[name];
        }
      }
      const result = await call(demo, tool.name, args);
      if (tool.annotations?.readOnlyHint) {
        reads.push(tool.name);
        expect(result.isError, `${tool.name}: ${result.content[0]?.text}`).toBeFalsy();
      } else {
        writes.push(tool.name);
        expect(result, tool.name).toMatchObject({
          isError: true,
          content: [{ type: 'text', text: '403 demo family is read-only' }],
        });
      }
    }
    expect(reads).toEqual(
      expect.arrayContaining([
        'get_family',
        'list_children',
        'get_child',
        'list_policies',
        'get_policy',
        'list_rules',
        'get_ratings_for_age',
        'list_connections',
        'list_enforcement_jobs',
        'list_devices',
        'get_viewing_history',
        'list_age_signals',
        'get_audit_log',
      ]),
    );
    expect(writes).toEqual(
      expect.arrayContaining([
        'create_child',
        'update_child',
        'delete_child',
        'pause_policy',
        'set_rule',
        'delete_rule',
        'connect_platform',
        'enforce_policy',
        'quick_setup_child',
        'record_age_signal',
      ]),
    );
    expect(await snapshot()).toBe(before);
  });

  it('keeps a token on its own family away from the demo family: 404, as for any other', async () => {
    const client = await connect(token);
    for (const [name, args, text] of [
      ['get_family', { family_id: DEMO_FAMILY_ID }, '404 family not found'],
      ['list_children', { family_id: DEMO_FAMILY_ID }, '404 family not found'],
      ['get_child', { child_id: DEMO_CHILDREN[0].id }, '404 child not found'],
    ] as const) {
      expect(await call(client, name, args), name).toMatchObject({
        isError: true,
        content: [{ type: 'text', text }],
      });
    }
  });

  it("reads the token's family audit log: the REST page, what the tools changed, another family 404", async () => {
    // A user of its own: the entries below are this family's only.
    const fay = await newSession(t.app);
    const fayFamily = (await family(fay, 'Fi')).family.id;
    const client = await connect((await mint(fay, fayFamily)).plain);
    const tool = (await client.listTools()).tools.find((each) => each.name === 'get_audit_log');
    expect(tool?.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
    });
    expect(Object.keys(tool?.inputSchema.properties ?? {}).sort()).toEqual([
      'before',
      'family_id',
      'limit',
    ]);
    expect(tool?.inputSchema.required ?? []).toEqual([]);

    const made = ok(await call(client, 'create_child', { name: 'Gil', birth_date: '2014-02-03' }));
    const rest = await t.app.inject({
      url: `/api/v1/families/${fayFamily}/audit-log`,
      headers: fay.auth,
    });
    expect(rest.statusCode).toBe(200);
    const result = await call(client, 'get_audit_log');
    const log = ok(result);
    expect(log).toEqual(rest.json());
    expect(JSON.parse(result.content[0]?.text ?? '')).toEqual(rest.json());
    expect(log.entries[0]).toMatchObject({
      action: 'child.created',
      actor: { type: 'mcp_token' },
      target: { type: 'child', id: made.id },
    });

    // Paged as the REST route is: limit, then before = the previous page's next_before.
    const first = ok(await call(client, 'get_audit_log', { family_id: fayFamily, limit: 1 }));
    expect(first.entries).toHaveLength(1);
    const second = ok(await call(client, 'get_audit_log', { limit: 1, before: first.next_before }));
    expect(second.entries[0].seq).toBe(first.entries[0].seq - 1);
    expect(await call(client, 'get_audit_log', { limit: 0 })).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: '400 limit must be a positive integer' }],
    });

    // Another family's log, as the REST route answers the token: not found.
    expect(await call(client, 'get_audit_log', { family_id: aliceFamily })).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: '404 family not found' }],
    });
  });

  it('surfaces a rate-limited token as HTTP 429 with Retry-After, before any tool runs', async () => {
    const carol = await newSession(t.app);
    const carolFamily = (await family(carol, 'Cy')).family.id;
    const limited = (await mint(carol, carolFamily)).plain;
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const post = () =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          authorization: `Bearer ${limited}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        payload: rpc,
      });
    let last = await post();
    for (let i = 0; i < 120 && last.statusCode !== 429; i++) {
      last = await post();
    }
    expect(last.statusCode).toBe(429);
    expect(last.headers['retry-after']).toBeDefined();
    expect(last.json()).toMatchObject({ code: 429, message: 'rate limit exceeded' });
    // The same user's REST calls share the bucket (CONTRACT §10.1: metered like its calls).
    const rest = await t.app.inject({
      url: `/api/v1/families/${carolFamily}`,
      headers: carol.auth,
    });
    expect(rest.statusCode).toBe(429);
  });

  it('logs a request line for each /mcp POST, with its status (the client’s SSE GET is a 405)', async () => {
    const client = await connect(token);
    const before = t.logs.length;
    await call(client, 'get_family');
    const lines = t.logs
      .slice(before)
      .filter(
        (line) =>
          line.msg === 'request completed' && line.path === '/mcp' && line.method === 'POST',
      );
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.map((line) => line.status)).toEqual(lines.map(() => 200));
  });

  it('lists resources and prompts, and reads the family', async () => {
    const client = await connect(token);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining([
        'haven://family',
        'haven://rule-categories',
        'haven://ratings/systems',
      ]),
    );
    const read = await client.readResource({ uri: 'haven://family' });
    const summary = JSON.parse(String((read.contents[0] as { text?: string }).text));
    expect(summary.family.id).toBe(aliceFamily);
    expect(summary.children.length).toBeGreaterThan(0);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['protect_new_child', 'explain_policy']);
    const prompt = await client.getPrompt({
      name: 'protect_new_child',
      arguments: { child_name: 'Eve', birth_date: '2017-02-03' },
    });
    expect(JSON.stringify(prompt.messages)).toContain('quick_setup_child');
  });

  describe('at the HTTP level', () => {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const send = (
      headers: Record<string, string>,
      body: unknown = rpc,
      method = 'POST',
    ): Promise<Response> =>
      fetch(`${base}/mcp`, {
        method,
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...headers,
        },
        body:
          method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
      });

    it('opens only for an MCP token: 401 with the realm for anything else', async () => {
      const revoked = await mint(alice, aliceFamily);
      await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/mcp/tokens/${revoked.id}`,
        headers: alice.auth,
      });
      for (const [label, headers, message] of [
        ['missing', {}, 'missing authorization header'],
        ['malformed', { authorization: 'Token abc' }, 'invalid authorization header format'],
        ['unknown', { authorization: 'Bearer svcmcp_unknown' }, 'invalid or expired token'],
        ['revoked', { authorization: `Bearer ${revoked.plain}` }, 'invalid or expired token'],
        ['session', alice.auth, 'invalid or expired token'],
        ['api key', { authorization: 'Bearer svc_test_abc' }, 'invalid or expired token'],
      ] as const) {
        const res = await send(headers);
        expect(res.status, label).toBe(401);
        expect(res.headers.get('www-authenticate'), label).toBe('Bearer realm="haven-mcp"');
        expect(await jsonOf(res), label).toMatchObject({ code: 401, message });
        // A refused request still carries its id, generated when the client sent none.
        expect(res.headers.get('x-request-id'), label).toMatch(/^[0-9a-f-]{36}$/);
      }
    });

    it('refuses a browser page of another origin (403), serves its own', async () => {
      const auth = { authorization: `Bearer ${token}` };
      const foreign = await send({ ...auth, origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect((await jsonOf(foreign)).message).toBe('origin not allowed: https://evil.example');
      const own = await send({ ...auth, origin: base });
      expect(own.status).toBe(200);
    });

    it('answers GET and DELETE with 405 Allow: POST', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await send({ authorization: `Bearer ${token}` }, undefined, method);
        expect(res.status, method).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        expect((await jsonOf(res)).code).toBe(405);
      }
    });

    it('keeps the request id and rate-limit headers, and meters the token user', async () => {
      const res = await send({ authorization: `Bearer ${token}`, 'x-request-id': 'mcp-trace-1' });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('mcp-trace-1');
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      const remaining = Number(res.headers.get('x-ratelimit-remaining'));
      // A tool call costs the one /mcp request, not also the REST call it makes.
      const call = await send(
        { authorization: `Bearer ${token}` },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'get_family', arguments: {} },
        },
      );
      expect(Number(call.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
      expect((await jsonOf(call)).result.structuredContent.id).toBe(aliceFamily);
    });

    it('answers what is not JSON-RPC with JSON-RPC errors, never a 5xx', async () => {
      const auth = { authorization: `Bearer ${token}` };
      const notJson = await send(auth, '{"jsonrpc": "2.0", "id": 1, "method":');
      expect(notJson.status).toBe(400);
      expect((await jsonOf(notJson)).error.code).toBe(-32700);
      const unknownMethod = await send(auth, {
        jsonrpc: '2.0',
        id: 3,
        method: 'no/such',
        params: {},
      });
      expect(unknownMethod.status).toBeLessThan(500);
      expect((await jsonOf(unknownMethod)).error.code).toBe(-32601);
      for (const body of [[], 42, { jsonrpc: '1.0', id: 1 }, { id: 1, method: 'tools/list' }]) {
        const res = await send(auth, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect((await jsonOf(res)).error.code, JSON.stringify(body)).toEqual(expect.any(Number));
      }
      const unknownTool = await send(auth, {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'drop_tables', arguments: {} },
      });
      expect(unknownTool.status).toBeLessThan(500);
      const huge = await send(auth, {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: {
          name: 'create_child',
          arguments: { name: 'x'.repeat(500_000), birth_date: '2019-01-01' },
        },
      });
      expect(huge.status).toBe(200);
      expect((await jsonOf(huge)).result).toMatchObject({ isError: true });
    });
  });
});
