// Renders @haven/sdk's generated sources from the API itself (CONTRACT.md §10.2): the app is
// built in-process (no server, no network) from dist/, its OpenAPI document written to
// packages/sdk/openapi.json, its types to src/generated/schema.ts (openapi-typescript), and
// one resource method per operation to src/generated/resources.ts (tags → resources,
// operations → methods, each summary as the doc comment).
//
//   node scripts/sdk-generate.mjs           write the files
//   node scripts/sdk-generate.mjs --check   fail (exit 1) if any file would change
import { readFile, writeFile } from 'node:fs/promises';
import openapiTS, { astToString } from 'openapi-typescript';

const ROOT = new URL('..', import.meta.url);
const SDK = new URL('packages/sdk/', ROOT);
const API = '/api/v1';
const DEVELOPER_TWIN = '/api/v1/developer/';

/** Resources named apart from their tag (CONTRACT.md §10.2 names, and tags that split). */
const RESOURCE_OF_TAG = {
  'Quick setup': 'setup',
  'Developer orgs': 'orgs',
  'API keys': 'apiKeys',
  'MCP tokens': 'mcpTokens',
  'Device agent': 'device',
  'Viewing history': 'viewingHistory',
  'Annex B': 'annexB',
};

/** Operations whose resource or method the general rule would not name as §10.2 does. */
const OVERRIDES = {
  quickSetup: ['setup', 'quick'],
  enforcePolicy: ['enforcement', 'enforce'],
  bulkCsmReviews: ['csm', 'bulkReviews'],
  publishPlatformConnect: ['platforms', 'connect'],
  selfRegisterAdvisor: ['advisors', 'selfRegister'],
  registerAdvisor: ['advisors', 'register'],
  registerOrgAdvisor: ['orgs', 'registerAdvisor'],
  listOrgAdvisors: ['orgs', 'listAdvisors'],
  getAuthenticatedUser: ['auth', 'me'],
  getFamilyAuditHead: ['auditLog', 'head'],
};

/** The OCSS verbs a `signer` signs (RFC 9421); the SDK refuses them without one. */
const SIGNED = new Set(['bulkCsmReviews', 'publishPlatformConnect']);

/** Words of an operation id that only repeat its resource's name. */
const RESOURCE_WORDS = {
  families: ['Family', 'Families'],
  children: ['Child', 'Children'],
  policies: ['Policy', 'Policies'],
  enforcement: ['Enforcement'],
  connections: ['Connection', 'Connections'],
  devices: ['Device', 'Devices'],
  viewingHistory: ['Viewing', 'History'],
  webhooks: ['Webhook', 'Webhooks'],
  device: ['Device'],
  providers: ['Provider'],
  platforms: ['Platform', 'Platforms'],
  ratings: ['Rating', 'Ratings'],
  rules: ['Rule'],
  sandbox: ['Sandbox'],
  mcpTokens: ['Mcp', 'Token', 'Tokens'],
  orgs: ['Developer', 'Org', 'Orgs'],
  apiKeys: ['Api', 'Key', 'Keys'],
  usage: ['Developer', 'Usage'],
  annexB: ['Annex', 'B'],
  testClocks: ['Test', 'Clock', 'Clocks'],
  auditLog: ['Family', 'Audit', 'Log'],
  erasures: ['Erasure'],
  retention: ['Retention', 'Policy'],
};

const camel = (text) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word, i) => (i === 0 ? word.toLowerCase() : word[0].toUpperCase() + word.slice(1)))
    .join('');

/** `familyID`, `childId` → `familyId`, `childId`. */
const paramName = (name) => name.replace(/ID$/, 'Id');

function nameOf(operationId, tag) {
  if (OVERRIDES[operationId]) {
    return OVERRIDES[operationId];
  }
  const resource = RESOURCE_OF_TAG[tag] ?? camel(tag);
  const words = operationId.match(/^[a-z]+|[A-Z][a-z0-9]*/g);
  const noise = RESOURCE_WORDS[resource] ?? [];
  const kept = [words[0], ...words.slice(1).filter((word) => !noise.includes(word))];
  return [resource, kept.join('')];
}

async function buildDocument() {
  const { buildApp } = await import(new URL('dist/app.js', ROOT).href);
  const { loadConfig } = await import(new URL('dist/config.js', ROOT).href);
  const { openStorage } = await import(new URL('dist/db/storage.js', ROOT).href);
  const config = loadConfig({ DATA_DIR: 'memory', LOG_LEVEL: 'silent' });
  const storage = await openStorage(config);
  const app = await buildApp(config, { database: storage.database });
  try {
    await app.ready();
    return JSON.parse(JSON.stringify(app.swagger()));
  } finally {
    await app.close();
    await storage.close();
  }
}

/** `#/components/schemas/…` → the schema it names. */
const resolved = (doc, schema) =>
  schema?.$ref
    ? doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]
    : schema;

/**
 * A list paged by cursor: `limit` and `before` in, `{<items>: [...], next_before}` out (the
 * audit log). Its method is awaitable for one page and iterable over every item; the name of
 * the items' array, or undefined when the operation is not such a list.
 */
function cursorItemsOf(doc, op, parameters) {
  const takes = (name) => parameters.some((p) => p.in === 'query' && p.name === name);
  const page = resolved(doc, op.responses?.['200']?.content?.['application/json']?.schema);
  if (!takes('limit') || !takes('before') || !page?.properties?.next_before) {
    return undefined;
  }
  const arrays = Object.entries(page.properties).filter(([, schema]) => schema.type === 'array');
  if (arrays.length !== 1) {
    throw new Error(`${op.operationId} pages by cursor but has ${arrays.length} arrays`);
  }
  return arrays[0][0];
}

/** The operations the SDK calls: /api/v1, each once (the /developer twin is a runtime choice). */
function operationsOf(doc) {
  const operations = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith(`${API}/`) || path.startsWith(DEVELOPER_TWIN)) {
      continue;
    }
    for (const [method, op] of Object.entries(item)) {
      const twin = doc.paths[`${DEVELOPER_TWIN}${path.slice(API.length + 1)}`]?.[method];
      const parameters = op.parameters ?? [];
      const body = op.requestBody?.content?.['application/json']?.schema;
      const bodyOptional =
        !op.requestBody?.required ||
        (body &&
          ((body.anyOf ?? []).some((option) => option.type === 'null') ||
            (body.type === 'object' && !(body.required ?? []).length)));
      operations.push({
        id: op.operationId,
        tag: op.tags?.[0] ?? 'Other',
        summary: op.summary ?? op.operationId,
        method: method.toUpperCase(),
        path,
        twin: twin !== undefined,
        signed: SIGNED.has(op.operationId),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query'),
        hasBody: body !== undefined,
        bodyOptional: Boolean(bodyOptional),
        paginated:
          parameters.some((p) => p.in === 'query' && p.name === 'limit') &&
          parameters.some((p) => p.in === 'query' && p.name === 'offset'),
        cursorItems: cursorItemsOf(doc, op, parameters),
      });
    }
  }
  for (const id of SIGNED) {
    if (!operations.some((op) => op.id === id)) {
      throw new Error(`signed operation ${id} is gone from the OpenAPI document`);
    }
  }
  return operations;
}

/** The document openapi-typescript renders: the SDK's operations and their success answers. */
function typesDocument(doc, operations) {
  const ids = new Set(operations.map((op) => op.id));
  const paths = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!ids.has(op.operationId) || path.startsWith(DEVELOPER_TWIN)) {
        continue;
      }
      const responses = Object.fromEntries(
        Object.entries(op.responses ?? {}).filter(([status]) => status.startsWith('2')),
      );
      // A query parameter with a default is optional to send, whatever `required` says.
      const parameters = (op.parameters ?? []).map((p) =>
        p.in === 'query' && p.schema?.default !== undefined ? { ...p, required: false } : p,
      );
      paths[path] = { ...paths[path], [method]: { ...op, parameters, responses } };
    }
  }
  return { ...doc, paths };
}

function renderResources(operations) {
  const resources = new Map();
  for (const op of operations) {
    const [resource, method] = nameOf(op.id, op.tag);
    const methods = resources.get(resource) ?? new Map();
    if (methods.has(method)) {
      throw new Error(
        `two operations would be ${resource}.${method}: ${methods.get(method).id}, ${op.id}`,
      );
    }
    methods.set(method, op);
    resources.set(resource, methods);
  }
  const lines = [
    '// Generated by scripts/sdk-generate.mjs from the OpenAPI document: do not edit.',
    '// `npm run sdk:generate` rewrites it; `npm run sdk:check` fails when it is stale.',
    "import type { Core, RequestOptions } from '../core.js';",
    "import type { ApiCall } from '../api-call.js';",
    "import type { PagedCall } from '../paged-call.js';",
    "import type { Body, Item, PageItem, Query, Result } from '../operation-types.js';",
    '',
    'export function createResources(core: Core) {',
    '  return {',
  ];
  for (const [resource, methods] of [...resources].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`    ${resource}: {`);
    for (const [method, op] of methods) {
      const args = op.pathParams.map((name) => `${paramName(name)}: string`);
      if (op.hasBody) {
        args.push(`body${op.bodyOptional ? '?' : ''}: Body<'${op.id}'>`);
      }
      if (op.query.length > 0) {
        // A parameter with a default is optional to send, whatever the document's `required` says.
        const required = op.query.some((p) => p.required && p.schema?.default === undefined);
        args.push(`query${required ? '' : '?'}: Query<'${op.id}'>`);
      }
      args.push('options?: RequestOptions');
      const spec = JSON.stringify({
        id: op.id,
        method: op.method,
        path: op.path,
        twin: op.twin,
        ...(op.signed ? { signed: true } : {}),
      });
      const call = `core.call(${spec}, [${op.pathParams.map(paramName).join(', ')}], ${
        op.hasBody ? 'body' : 'undefined'
      }, ${op.query.length > 0 ? 'query' : 'undefined'}, options)`;
      const doc = `      /** ${op.summary.replaceAll('*/', '*\\/')} (\`${op.method} ${op.path}\`${op.signed ? ', signed' : ''}${op.cursorItems ? '; one page, or `for await` over every item of every page' : ''}) */`;
      if (op.cursorItems) {
        lines.push(doc);
        lines.push(
          `      ${method}: (${args.join(', ')}): PagedCall<Result<'${op.id}'>, PageItem<'${op.id}', '${op.cursorItems}'>> => core.cursorPaged(${spec}, [${op.pathParams.map(paramName).join(', ')}], query, '${op.cursorItems}', options),`,
        );
      } else if (op.paginated) {
        lines.push(doc);
        lines.push(
          `      ${method}: Object.assign((${args.join(', ')}): ApiCall<Result<'${op.id}'>> => ${call}, {`,
        );
        lines.push(
          '        /** Every item, page after page (`limit` is the page size; offset is managed). */',
        );
        lines.push(
          `        all: (${args.join(', ')}): AsyncIterable<Item<'${op.id}'>> => core.paginate((page) => core.call(${spec}, [${op.pathParams.map(paramName).join(', ')}], undefined, { ...query, ...page }, options), query?.limit),`,
        );
        lines.push('      }),');
      } else {
        lines.push(doc);
        lines.push(
          `      ${method}: (${args.join(', ')}): ApiCall<Result<'${op.id}'>> => ${call},`,
        );
      }
    }
    lines.push('    },');
  }
  lines.push('  };', '}', '', 'export type Resources = ReturnType<typeof createResources>;', '');
  return lines.join('\n');
}

const check = process.argv.includes('--check');
const doc = await buildDocument();
const operations = operationsOf(doc);
const files = [
  ['openapi.json', `${JSON.stringify(doc, null, 2)}\n`],
  [
    'src/generated/schema.ts',
    `// Generated by scripts/sdk-generate.mjs (openapi-typescript) from the OpenAPI document: do not edit.\n${astToString(await openapiTS(typesDocument(doc, operations), { alphabetize: true }))}`,
  ],
  ['src/generated/resources.ts', renderResources(operations)],
];
let stale = 0;
for (const [name, text] of files) {
  const url = new URL(name, SDK);
  const current = await readFile(url, 'utf8').catch(() => undefined);
  if (current === text) {
    continue;
  }
  if (check) {
    stale++;
    process.stderr.write(`packages/sdk/${name} is not what the API generates\n`);
  } else {
    await writeFile(url, text);
    process.stdout.write(`wrote packages/sdk/${name}\n`);
  }
}
if (check && stale > 0) {
  process.stderr.write('run `npm run sdk:generate` and commit the result\n');
  process.exit(1);
}
if (check) {
  process.stdout.write(`@haven/sdk matches the API (${operations.length} operations)\n`);
}
