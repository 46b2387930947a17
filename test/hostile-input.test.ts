// Every operation of /openapi.json, sent what a hostile or broken client sends: malformed
// path ids, broken and wrong-typed bodies, hostile strings, wrong content types, hostile
// query strings. Whatever arrives, the answer is a 4xx (or a 2xx), never a 5xx, and a 4xx
// comes in the house envelope (the `/oauth/*` routes answer OAuth-style bodies instead).
// New routes join by being in the document.
import { randomUUID } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';
import { bearer, createOrg, longSession, mintKey, type Session } from './identity.js';

interface Operation {
  method: string;
  path: string;
  bodyProperties: string[];
  hasBody: boolean;
}

const HOSTILE_STRINGS = ['\u0000', '\ud800', 'x'.repeat(70_000), '../../etc/passwd', '%00', '💥'];
const HOSTILE_VALUES: unknown[] = [
  null,
  12345,
  -1,
  1e308,
  true,
  [],
  {},
  [[[]]],
  ...HOSTILE_STRINGS,
];
const MALFORMED_IDS = ['not-a-uuid', '%00', 'x'.repeat(300), '..%2F..', '1'];
const HOSTILE_QUERY = '?limit=-1&offset=abc&days=1e99&age=%00&cursor=%ff&since_version=NaN&x[]=1';

function deeplyNested(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

let t: TestApp;
let session: Session;
let keyAuth: Record<string, string>;
let operations: Operation[];

function credentialFor(path: string): Record<string, string> {
  if (path.startsWith('/api/v1/developer/')) {
    return keyAuth;
  }
  return path.startsWith('/api/v1/') ? session.auth : {};
}

function concretePath(path: string, malformed?: { param: string; value: string }): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    malformed?.param === name ? malformed.value : name === 'did' ? 'did:ocss:nobody' : randomUUID(),
  );
}

async function send(options: InjectOptions & { url: string }) {
  // Every request in a fresh rate-limit minute: this file is about input, not limits.
  t.clock.advance(61_000);
  const res = await t.app.inject(options);
  const where = `${options.method} ${options.url.slice(0, 120)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
  expect(res.statusCode, where).toBeLessThan(500);
  if (res.statusCode >= 400 && !options.url.startsWith('/oauth/') && res.statusCode !== 429) {
    const body = res.json();
    expect(typeof body.error, where).toBe('string');
    expect(typeof body.message, where).toBe('string');
    expect(body.code, where).toBe(res.statusCode);
  }
  return res;
}

beforeAll(async () => {
  t = await buildTestApp();
  session = await longSession(t);
  const org = await createOrg(t.app, session);
  keyAuth = bearer((await mintKey(t.app, session, org.id)).key);
  const doc = (await t.app.inject({ url: '/openapi.json' })).json();
  operations = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, never>>)) {
    for (const [method, op] of Object.entries(item)) {
      const operation = op as {
        requestBody?: { content?: Record<string, { schema?: { properties?: object } }> };
      };
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        hasBody: operation.requestBody !== undefined,
        bodyProperties: Object.keys(schema?.properties ?? {}),
      });
    }
  }
}, 60_000);
afterAll(() => t.close());

describe('hostile input on every operation of the OpenAPI document', () => {
  it('finds the operations', () => {
    expect(operations.length).toBeGreaterThan(60);
  });

  it('malformed ids in every path parameter', async () => {
    for (const op of operations) {
      for (const param of op.path.match(/\{(\w+)\}/g) ?? []) {
        for (const value of MALFORMED_IDS) {
          const url = concretePath(op.path, { param: param.slice(1, -1), value });
          await send({
            method: op.method as never,
            url,
            headers: credentialFor(op.path),
            ...(op.hasBody ? { payload: {} } : {}),
          });
        }
      }
    }
  }, 120_000);

  it('broken, deep, wrong-typed and oversize bodies, and wrong content types', async () => {
    const raw = ['{', '{"a":', '[1,2', 'nul', deeplyNested(5_000), '[]', 'null', '"text"', '12'];
    for (const op of operations.filter((o) => o.hasBody)) {
      const url = concretePath(op.path);
      const headers = { ...credentialFor(op.path), 'content-type': 'application/json' };
      for (const payload of raw) {
        await send({ method: op.method as never, url, headers, payload });
      }
      await send({
        method: op.method as never,
        url,
        headers,
        payload: `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`,
      });
      for (const contentType of [
        'text/plain',
        'application/xml',
        'multipart/form-data; boundary=x',
      ]) {
        await send({
          method: op.method as never,
          url,
          headers: { ...credentialFor(op.path), 'content-type': contentType },
          payload: 'a=b',
        });
      }
    }
  }, 120_000);

  it('every body field set to each hostile value', async () => {
    for (const op of operations.filter((o) => o.bodyProperties.length > 0)) {
      const url = concretePath(op.path);
      for (const field of op.bodyProperties) {
        for (const value of HOSTILE_VALUES) {
          await send({
            method: op.method as never,
            url,
            headers: { ...credentialFor(op.path), 'content-type': 'application/json' },
            payload: JSON.stringify({ [field]: value }),
          });
        }
      }
    }
  }, 120_000);

  it('hostile query strings and garbage credentials', async () => {
    const garbage = [
      { authorization: 'Bearer \u0001\u0002' },
      { authorization: 'Basic Zm9vOmJhcg==' },
      { authorization: `Bearer svc_test_${'A'.repeat(500)}` },
      { authorization: 'Bearer a.b.c' },
      { 'x-api-key': 'svc_' },
      { 'x-sandbox-session': 'x'.repeat(500) },
    ];
    for (const op of operations) {
      const url = concretePath(op.path);
      const body = op.hasBody ? { payload: {} } : {};
      await send({
        method: op.method as never,
        url: `${url}${HOSTILE_QUERY}`,
        headers: credentialFor(op.path),
        ...body,
      });
      for (const headers of garbage) {
        await send({ method: op.method as never, url, headers, ...body });
      }
    }
    const health = await t.app.inject({ url: '/health' });
    expect(health.statusCode).toBe(200);
  }, 120_000);
});
