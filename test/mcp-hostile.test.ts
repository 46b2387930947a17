// Hostile input on POST /mcp (docs/decisions.md "MCP HTTP edges"), seeded like
// hostile-input.test.ts (HOSTILE_SEED): bodies that are not JSON or not JSON-RPC, unknown
// methods and tools, and every tool called with each argument given each hostile value. Never a
// 5xx; every answer is JSON: a JSON-RPC error, a tool error (isError), a result, or, before
// JSON-RPC is reached (auth, size, rate), the house envelope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';
import { longSession } from './identity.js';
import { deriveSeed, Rng } from './schema-sample.js';

const SEED = Number(process.env.HOSTILE_SEED ?? Date.now() % 4_294_967_296);
const REPLAY = `HOSTILE_SEED=${SEED} npx vitest run test/mcp-hostile.test.ts`;
const HOSTILE_VALUES: unknown[] = [
  null,
  -1,
  1e308,
  true,
  [],
  {},
  [[[]]],
  '',
  'a\u0000b',
  '\ud800',
  'x'.repeat(70_000),
  '../../etc/passwd',
  '00000000-0000-0000-0000-000000000000',
  '💥',
];

describe('hostile input on POST /mcp', () => {
  let t: TestApp;
  let token = '';
  let counted = 0;
  const statuses: Record<string, number> = {};

  async function post(body: string | object, where: string) {
    // A fresh rate-limit minute each time: this file is about input, not limits.
    t.clock.advance(61_000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
    counted++;
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    const label = `seed=${SEED} ${where} → ${res.statusCode} ${res.body.slice(0, 200)} (replay: ${REPLAY})`;
    expect(res.statusCode, label).toBeLessThan(500);
    const answer = JSON.parse(res.body);
    if (res.statusCode >= 400 && answer.jsonrpc === undefined) {
      expect(answer, label).toMatchObject({ code: res.statusCode, message: expect.any(String) });
    } else {
      expect(answer.result !== undefined || answer.error !== undefined, label).toBe(true);
    }
    return answer;
  }

  beforeAll(async () => {
    t = await buildTestApp();
    const session = await longSession(t);
    const setup = await t.app.inject({
      method: 'POST',
      url: '/api/v1/setup/quick',
      headers: session.auth,
      payload: { child_name: 'Hostile', birth_date: '2014-05-06' },
    });
    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp/tokens',
      headers: session.auth,
      payload: { family_id: setup.json().family.id, label: 'hostile' },
    });
    token = minted.json().plain;
  }, 60_000);
  afterAll(async () => {
    console.log(
      `mcp-hostile seed=${SEED}: ${counted} requests; statuses ${JSON.stringify(statuses)}`,
    );
    await t?.close();
  });

  it('bodies that are not JSON-RPC, and methods and tools that do not exist', async () => {
    for (const body of [
      '',
      '{',
      'null',
      '"tools/list"',
      '[]',
      '[1,2,3]',
      JSON.stringify({ jsonrpc: '2.0' }),
      JSON.stringify({ jsonrpc: '2.0', id: {}, method: 'tools/list' }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 42 }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'no/such/method' }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'rm_rf' } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42 } }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: 'file:///etc/passwd' },
      }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'prompts/get',
        params: { name: 'explain_policy' },
      }),
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    ]) {
      await post(body, `body ${body.slice(0, 60)}`);
    }
  });

  it('every tool, each argument given each hostile value (seeded)', async () => {
    const listed = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'tools/list');
    const tools = listed.result.tools as Array<{
      name: string;
      inputSchema: { properties?: Record<string, unknown> };
    }>;
    expect(tools.length).toBeGreaterThanOrEqual(25);
    let id = 2;
    for (const tool of tools) {
      const rng = new Rng(deriveSeed(SEED, `mcp ${tool.name}`));
      const names = Object.keys(tool.inputSchema.properties ?? {});
      for (const name of [...names, 'not_an_argument']) {
        // Three hostile values per argument, drawn by the PRNG; the rest of the arguments
        // hostile too half of the time.
        for (const value of rng.sample(HOSTILE_VALUES, 3)) {
          const args: Record<string, unknown> = {};
          if (rng.int(2) === 0) {
            for (const other of names) {
              args[other] = rng.pick(HOSTILE_VALUES);
            }
          }
          args[name] = value;
          const answer = await post(
            {
              jsonrpc: '2.0',
              id: id++,
              method: 'tools/call',
              params: { name: tool.name, arguments: args },
            },
            `${tool.name}(${name}=${JSON.stringify(value)?.slice(0, 40)})`,
          );
          // A hostile argument is never carried out as if it were fine by a write tool.
          if (answer.result && !answer.result.isError && tool.name.startsWith('delete_')) {
            throw new Error(`seed=${SEED}: ${tool.name} accepted ${name}=${JSON.stringify(value)}`);
          }
        }
      }
    }
  }, 240_000);
});
