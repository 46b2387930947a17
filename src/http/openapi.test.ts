import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/app.js';
import { deprecationHeaders } from './deprecation.js';
import { isMeteredPath } from './route-classes.js';

const SINCE = new Date('2026-03-01T00:00:00Z');
const SUNSET = new Date('2026-12-01T00:00:00Z');

async function deprecatedProbe(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/v1/probe/old',
    {
      config: {
        deprecation: { since: SINCE, sunset: SUNSET, link: 'https://haven.test/changelog#old' },
      },
      schema: { operationId: 'probeOld', summary: 'probe', tags: ['Probe'] },
    },
    async () => ({ ok: true }),
  );
  app.get(
    '/api/v1/probe/old-no-sunset',
    {
      config: { deprecation: { since: SINCE } },
      schema: { operationId: 'probeOldNoSunset', summary: 'probe', tags: ['Probe'] },
    },
    async () => ({ ok: true }),
  );
}

type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  deprecated?: boolean;
  responses: Record<string, { description: string }>;
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

/** Every method+path Fastify serves, read from its printed route tree. */
function servedRoutes(app: FastifyInstance): Array<{ method: string; path: string }> {
  const tree = app.printRoutes({ commonPrefix: false });
  const routes: Array<{ method: string; path: string }> = [];
  const stack: Array<{ indent: number; path: string }> = [];
  for (const line of tree.split('\n')) {
    // Nodes without methods are shared prefixes: they still shape their children's paths.
    const match = /^([\s│├└─]*)(\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (!match?.[2]) {
      continue;
    }
    const indent = (match[1] ?? '').length;
    while (stack.length > 0 && (stack.at(-1)?.indent ?? 0) >= indent) {
      stack.pop();
    }
    const path = (stack.at(-1)?.path ?? '') + match[2];
    stack.push({ indent, path });
    for (const method of match[3]?.split(', ') ?? []) {
      routes.push({ method, path });
    }
  }
  return routes;
}

describe('OpenAPI document and deprecation', () => {
  let t: TestApp;
  let doc: Document;
  beforeAll(async () => {
    t = await buildTestApp({ plugins: [deprecatedProbe] });
    doc = (await t.app.inject({ url: '/openapi.json' })).json();
  });
  afterAll(async () => t.close());

  it('serves a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('documents every served route, except the reference page assets, the console and the site icon', () => {
    const routes = servedRoutes(t.app).filter(
      (r) =>
        r.method !== 'HEAD' &&
        r.path !== '/docs' &&
        !r.path.startsWith('/docs/') &&
        r.path !== '/favicon.ico' &&
        // The developer console is pages, not API (docs/decisions.md).
        r.path !== '/console' &&
        !r.path.startsWith('/console/'),
    );
    expect(routes.length).toBeGreaterThan(3);
    for (const { method, path } of routes) {
      // The router prints a parameter that two routes name differently as `:a|:b`
      // (GET /platforms/{platformID}, PATCH /platforms/{did}/connect): either name may be it.
      const names = path.match(/:\w+(?:\|:\w+)+/)?.[0].split('|') ?? [undefined];
      const documented = names
        .map((name) => (name ? path.replace(/:\w+(?:\|:\w+)+/, name) : path))
        .map((concrete) => doc.paths[concrete.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()])
        .find((operation) => operation !== undefined);
      expect(documented?.operationId, `${method} ${path}`).toMatch(/^[a-zA-Z]+$/);
    }
  });

  it('gives every operation an id, summary, tags and its error responses', () => {
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.operationId ?? '', `${method} ${path}`).toMatch(/^[a-zA-Z]+$/);
        expect(ids.has(op.operationId ?? '')).toBe(false);
        ids.add(op.operationId ?? '');
        expect((op.summary ?? '').length).toBeGreaterThan(0);
        expect(op.tags?.length).toBeGreaterThan(0);
        expect(op.responses['500']?.description).toBe('Internal Server Error');
        if (isMeteredPath(path)) {
          expect(op.responses['429']?.description).toBe('Too Many Requests');
        }
      }
    }
    const create = doc.paths['/api/v1/probe/old']?.get;
    expect(create?.responses['400']).toBeUndefined();
  });

  it('publishes the house envelope once, as a shared component', () => {
    const components = (doc as unknown as { components: { schemas: Record<string, unknown> } })
      .components.schemas;
    expect(components.ErrorEnvelope).toMatchObject({
      required: ['error', 'message', 'code'],
    });
  });

  it('serves a browsable reference at /docs without any CDN', async () => {
    const redirect = await t.app.inject({ url: '/docs' });
    expect([200, 301, 302]).toContain(redirect.statusCode);
    const page = await t.app.inject({ url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('/openapi.json');
    expect(page.body).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)\./);
    const script = await t.app.inject({ url: '/docs/js/scalar.js' });
    expect(script.statusCode).toBe(200);
  });

  it('marks a deprecated route in the document and on every response', async () => {
    expect(doc.paths['/api/v1/probe/old']?.get?.deprecated).toBe(true);
    expect(doc.paths['/health']?.get?.deprecated).toBeUndefined();

    const res = await t.app.inject({ url: '/api/v1/probe/old' });
    expect(res.headers.deprecation).toBe(`@${SINCE.getTime() / 1000}`);
    expect(res.headers.sunset).toBe('Tue, 01 Dec 2026 00:00:00 GMT');
    expect(res.headers.link).toBe(
      '<https://haven.test/changelog#old>; rel="deprecation", <https://haven.test/changelog#old>; rel="sunset"',
    );

    const bare = await t.app.inject({ url: '/api/v1/probe/old-no-sunset' });
    expect(bare.headers.deprecation).toBe('@1772323200');
    expect(bare.headers.sunset).toBeUndefined();
    expect(bare.headers.link).toBeUndefined();
  });

  it('sets no deprecation headers on routes that are not deprecated', async () => {
    const res = await t.app.inject({ url: '/health' });
    expect(res.headers.deprecation).toBeUndefined();
    expect(res.headers.sunset).toBeUndefined();
  });

  it('formats the headers as RFC 9745 and RFC 8594 say', () => {
    expect(deprecationHeaders({ since: new Date(1_700_000_000_500) }).deprecation).toBe(
      '@1700000000',
    );
  });
});
