import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { NotFoundError } from './errors.js';

/** Routes of this test only, registered the way a module registers its own. */
async function probeRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/v1/probe/things/:thingId',
    {
      schema: {
        operationId: 'probeCreateThing',
        summary: 'probe',
        tags: ['Probe'],
        params: Type.Object({ thingId: Type.String({ format: 'uuid' }) }),
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 10 }),
          count: Type.Optional(Type.Integer({ minimum: 0 })),
          kind: Type.Optional(Type.Enum(['a', 'b'])),
          env: Type.Optional(
            Type.String({
              enum: ['live', 'test'],
              'x-error-message': "environment must be 'live' or 'test'",
            }),
          ),
          tags: Type.Optional(Type.Array(Type.String())),
        }),
      },
    },
    async (request) => ({ id: request.params.thingId, ...request.body }),
  );
  app.get(
    '/api/v1/probe/missing',
    { schema: { operationId: 'probeMissing', summary: 'probe', tags: ['Probe'] } },
    async () => {
      throw new NotFoundError('thing not found');
    },
  );
  app.get(
    '/api/v1/probe/crash',
    { schema: { operationId: 'probeCrash', summary: 'probe', tags: ['Probe'] } },
    async () => {
      throw new Error('connection string postgres://secret@db leaked?');
    },
  );
}

const THING = '7d0c1f3e-8c4b-4e55-9a5b-0f1f0a3b2c11';

describe('HTTP core: envelope, validation, request ids, logs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ plugins: [probeRoutes] });
  });
  afterAll(async () => t.close());

  const post = (body: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/probe/things/${THING}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    });

  it('answers unknown routes, /api/v2 included, with the house 404', async () => {
    for (const url of ['/api/v2/anything', '/api/v2/developers/orgs', '/nope', '/api/v1/nope']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Not Found', message: 'route not found', code: 404 });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('turns broken JSON into 400 invalid JSON body', async () => {
    for (const body of ['{bad', '{"name":', '[1,2', 'nul', '{"a":1}}']) {
      const res = await post(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'Bad Request', message: 'invalid JSON body', code: 400 });
    }
  });

  it('refuses text PostgreSQL cannot store (NUL, unpaired surrogates), naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['{"name":"a\\u0000b"}', 'name must not contain NUL characters'],
      ['{"name":"ok","tags":["x","\\ud800"]}', 'tags[1] must not contain unpaired surrogates'],
      ['{"name":"ok","meta":{"\\u0000":1}}', 'meta property names must not contain NUL characters'],
      ['"\\udc00"', 'request body must not contain unpaired surrogates'],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json()).toEqual({ error: 'Bad Request', message, code: 400 });
    }
    // A proper pair is a character like any other.
    const emoji = await post('{"name":"\\ud83d\\ude00"}');
    expect(emoji.statusCode).toBe(200);
  });

  it('refuses NUL in path parameters and query values, naming them', async () => {
    const res = await t.app.inject({ url: '/api/v1/providers/did%00x/connect' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Bad Request',
      message: 'did must not contain NUL characters',
      code: 400,
    });
    const query = await t.app.inject({ url: '/api/v1/ratings/by-age?age=%00' });
    expect(query.statusCode).toBe(400);
    expect(query.json().message).toBe('age must not contain NUL characters');
  });

  it('walks bodies nested thousands deep without overflowing', async () => {
    const deep = `${'['.repeat(5000)}"\\u0000"${']'.repeat(5000)}`;
    const res = await post(deep);
    expect(res.statusCode).toBe(400);
  });

  it('names the field that breaks the schema', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name is required'],
      [{ name: 5 }, 'name must be a string'],
      [{ name: null }, 'name must be a string'],
      [{ name: '' }, 'name must not be empty'],
      [{ name: 'x'.repeat(11) }, 'name must be at most 10 characters'],
      [{ name: 'ok', count: -1 }, 'count must be >= 0'],
      [{ name: 'ok', count: '3' }, 'count must be an integer'],
      [{ name: 'ok', kind: 'c' }, 'kind must be one of: a, b'],
      [{ name: 'ok', env: 'prod' }, "environment must be 'live' or 'test'"],
      [{ name: 'ok', tags: [1] }, 'tags[0] must be a string'],
      [[], 'request body must be an object'],
      ['text', 'request body must be an object'],
    ];
    for (const [body, message] of cases) {
      const res = await post(JSON.stringify(body));
      expect({ body, status: res.statusCode, json: res.json() }).toEqual({
        body,
        status: 400,
        json: { error: 'Bad Request', message, code: 400 },
      });
    }
  });

  it('asks for a body when none was sent', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/probe/things/${THING}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('request body is required');
  });

  it('ignores unknown properties and accepts a valid body', async () => {
    const res = await post(JSON.stringify({ name: 'ok', extra: true, __proto__: { admin: 1 } }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: THING, name: 'ok' });
  });

  it('says which id is malformed', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/probe/things/not-a-uuid',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"x"}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('invalid thing ID');
  });

  it('refuses bodies over 1 MiB with 413 and other content types with 415', async () => {
    const big = await post(JSON.stringify({ name: 'x', pad: 'a'.repeat(2 * 1024 * 1024) }));
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ error: 'Payload Too Large', code: 413 });

    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      const res = await post('name=x', { 'content-type': type });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ error: 'Unsupported Media Type', code: 415 });
    }
  });

  it('maps thrown service errors to their status, and anything else to a bare 500', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/v1/probe/missing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'Not Found', message: 'thing not found', code: 404 });

    const crash = await t.app.inject({
      method: 'GET',
      url: '/api/v1/probe/crash',
      headers: { 'x-request-id': 'trace-crash-1' },
    });
    expect(crash.statusCode).toBe(500);
    expect(crash.json()).toEqual({
      error: 'Internal Server Error',
      message: 'internal error',
      code: 500,
    });
    expect(crash.body).not.toContain('postgres');
    const logged = t.logs.find((line) => line.reqId === 'trace-crash-1' && line.level === 50);
    expect(logged?.msg).toBe('internal error');
    expect(JSON.stringify(logged?.err)).toContain('leaked?');
  });

  it('echoes a well-formed X-Request-Id and mints one otherwise', async () => {
    const echoed = await t.app.inject({ url: '/health', headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123');

    const minted = await t.app.inject({ url: '/health' });
    expect(minted.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    for (const bad of ['x'.repeat(129), 'has space', 'tab\there']) {
      const res = await t.app.inject({ url: '/health', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).not.toBe(bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const notFound = await t.app.inject({ url: '/api/v2/x', headers: { 'x-request-id': 'nf-1' } });
    expect(notFound.headers['x-request-id']).toBe('nf-1');
    expect(notFound.headers['x-content-type-options']).toBe('nosniff');
  });

  it('logs one line per request with id, method, route, status and latency, and no secrets', async () => {
    const secrets = ['svc_test_SECRETSECRETSECRET', 'svcdev_DEVICESECRET', 'eyJhbGciOi.jwt.secret'];
    await t.app.inject({
      method: 'POST',
      url: `/api/v1/probe/things/${THING}?token=${secrets[2]}`,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${secrets[0]}`,
        'x-api-key': secrets[0],
        'x-device-key': secrets[1],
        'x-request-id': 'log-check-1',
      },
      payload: JSON.stringify({ name: 'ok', secret: secrets[1] }),
    });
    const line = t.logs.find((l) => l.reqId === 'log-check-1' && l.msg === 'request completed');
    expect(line).toMatchObject({
      method: 'POST',
      route: '/api/v1/probe/things/:thingId',
      path: `/api/v1/probe/things/${THING}`,
      status: 200,
    });
    expect(typeof line?.ms).toBe('number');
    for (const secret of secrets) {
      expect(t.rawLogs.some((raw) => raw.includes(secret))).toBe(false);
    }
  });
});
