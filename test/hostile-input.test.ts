// Every operation of /openapi.json, sent what a hostile or broken client sends: malformed
// path ids, a valid-looking body with each required field missing, every body field given
// each wrong type, null, odd and very long strings and out-of-range numbers, arrays where
// objects belong and objects where arrays belong, broken / deep / oversize bodies, wrong
// content types, hostile query strings and headers, garbage and wrong-scheme credentials,
// and (over real sockets) the bodies most likely to break a connection. Whatever arrives,
// the answer is a 2xx or a 4xx, never a 5xx, never a dropped connection; a 4xx comes in the
// house envelope (except the IP bucket's plain-text 429 and the OAuth-style `/oauth/*`
// bodies), and /health stays 200. New routes join by being in the document.
//
// Seeded and repeatable: every random choice (ids, which odd strings each string field gets,
// the fuzz round's mutants) comes from a mulberry32 PRNG seeded by HOSTILE_SEED, or by a
// random seed when it is unset. The seed is in every assertion message and in the summary
// line printed at the end (pass or fail). To replay a run:
//
//   HOSTILE_SEED=<seed> npx vitest run test/hostile-input.test.ts
//
// Each test draws from its own stream (the seed mixed with the test's name, and per field
// with the operation and field path), so a test replays the same way when run alone (-t).
//
// What is exhaustive and what is sampled:
// - exhaustive: every operation; every path parameter × every malformed id; every body
//   operation × every broken/deep/oversize body and wrong content type; every required field
//   (nested ones included) removed in turn; every body field × every value of EVERY_FIELD
//   (a value of each JSON type, so each field gets each wrong type) and × the values its type
//   calls for (string limits and formats, out-of-range number literals, arrays for objects,
//   objects for arrays); every declared query/header parameter × every hostile value; every
//   operation × every garbage credential; every body operation over a real socket.
// - sampled by the PRNG: ODD_STRINGS_PER_FIELD of the ODD_STRINGS pool per string field (the
//   full cross product is ~40 × every string field), the ids that fill path parameters where no
//   real resource is used, and FUZZ_PER_OPERATION mutants per body operation that make 1-3
//   fields hostile at once (from the field's whole pool, ODD_STRINGS included), drop a
//   required field or add an unknown key.
//
// Path parameters are real resources (a family, child, policy, device, webhook … made in
// beforeAll, one set per credential kind) wherever the method is not DELETE, so hostile
// values get past the 404 into the handlers and the database; DELETE gets made-up ids, so
// the fixtures survive the run.
import { randomInt } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';
import { bearer, createOrg, longSession, mintKey, type Session } from './identity.js';
import {
  deriveSeed,
  type FieldPath,
  type Hint,
  OpenApiSchemas,
  RawJson,
  Rng,
  type Schema,
  serialize,
  without,
  withValue,
} from './schema-sample.js';

function seedFromEnv(): number {
  const raw = process.env.HOSTILE_SEED;
  if (raw === undefined || raw.trim() === '') {
    return randomInt(0x1_0000_0000);
  }
  const seed = Number(raw);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
    throw new Error(`HOSTILE_SEED must be an integer in 0..4294967295, not ${raw}`);
  }
  return seed;
}

const SEED = seedFromEnv();
const REPLAY = `HOSTILE_SEED=${SEED} npx vitest run test/hostile-input.test.ts`;
const rngFor = (label: string) => new Rng(deriveSeed(SEED, label));

const ODD_STRINGS_PER_FIELD = 4;
const SOFT_FAILURES = 30;
let failures = 0;
const FUZZ_PER_OPERATION = 12;
/** Deliveries of the fixture webhook go here: the discard port, refused at once, no egress. */
const UNREACHABLE_URL = 'http://127.0.0.1:9/hostile';

/** Every body field gets each of these: one value of each JSON type, and the hostile strings. */
const EVERY_FIELD: unknown[] = [
  null,
  12345,
  -1,
  1e308,
  true,
  false,
  [],
  {},
  [[[]]],
  '',
  'a\u0000b',
  '\ud800',
  'x'.repeat(70_000),
  '../../etc/passwd',
  '%00',
  '💥',
];

/** Odd strings; each string field gets ODD_STRINGS_PER_FIELD of them, drawn by the PRNG. */
const ODD_STRINGS = [
  '..\\..\\windows\\win.ini',
  '%ff',
  '\u202egnp.exe',
  '\u200b',
  '\ufeffbom',
  '  padded  ',
  ' ',
  '\t\n\r',
  "' OR 1=1 --",
  '"; DROP TABLE families; --',
  '$'.concat('{jndi:ldap://127.0.0.1:9/x}'),
  '{{7*7}}',
  '<script>alert(1)</script>',
  '\r\nX-Injected: 1',
  '__proto__',
  'constructor',
  '0',
  '-1',
  'true',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '1e999',
  '\\',
  '\\u0000',
  '\udc00x',
  'x\ud83d',
  '💥'.repeat(5_000),
  'e\u0301'.repeat(300),
  'Ω≈ç√∫ 田中 ﷺ',
  '\u0007\u0008\u001b[31m\u007f',
  '\uffff\ufffe',
  'did:ocss:../../x',
  'x'.repeat(256),
  'x'.repeat(4097),
  '*',
  '%',
  '?a=b#c',
  '\u00a0',
];

const NUMBER_LITERALS = [
  '-1',
  '0',
  '-0',
  '1.5',
  '0.1',
  '1e308',
  '-1e308',
  '1e999',
  '-1e999',
  '1e-999',
  '9007199254740993',
  '-9007199254740993',
  '2147483648',
  '-2147483649',
  '99999999999999999999999999999',
  '1E2',
];

const MALFORMED_IDS = [
  'not-a-uuid',
  '%00',
  'x'.repeat(300),
  'x'.repeat(600),
  '..%2F..',
  '1',
  '-1',
  '9'.repeat(40),
  '%ff',
  '%C0%AF',
  encodeURIComponent('💥'),
  '%20',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '%7B00000000-0000-4000-8000-000000000000%7D',
  '00000000-0000-4000-8000-000000000000%0A',
  'did:ocss:',
];
const HOSTILE_QUERY = '?limit=-1&offset=abc&days=1e99&age=%00&cursor=%ff&since_version=NaN&x[]=1';
const HOSTILE_QUERY_VALUES = [
  '-1',
  '0',
  'abc',
  '1e99',
  'NaN',
  '1.5',
  '99999999999999999999',
  '%00',
  '%ff',
  '',
  'x'.repeat(5_000),
  encodeURIComponent('💥'),
  '..%2F..',
  'not-a-uuid',
  '%0D%0AX-Injected:%201',
];
const HOSTILE_HEADER_VALUES = ['*', '"', 'W/', 'x'.repeat(8_000), '\u0001\u0002', '💥'];

function deeplyNested(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

interface Operation {
  key: string;
  method: string;
  path: string;
  security: string[];
  hasBody: boolean;
  bodySchema?: Schema;
  queryParams: Array<{ name: string; schema: Schema }>;
  headerParams: string[];
}

type Ids = Record<string, string>;

let t: TestApp;
let session: Session;
let keyAuth: Record<string, string>;
let operations: Operation[];
let schemas: OpenApiSchemas;
let openApiDocument: unknown;
/** Real resources by path-parameter name: for the session routes and for /developer/. */
const realIds: { session: Ids; developer: Ids; shared: Ids } = {
  session: {},
  developer: {},
  shared: {},
};
let deviceKey = '';

// ---------------------------------------------------------------------------------------
// Figures: every answer the file gets, by status class.
const tally = {
  total: 0,
  '2xx': 0,
  '3xx': 0,
  '4xx': 0,
  '429': 0,
  '5xx': 0,
  other: 0,
  drops: 0,
  lateSocketErrors: 0,
};
const touched = new Set<string>();

function record(status: number, op?: Operation): void {
  tally.total++;
  if (op) {
    touched.add(op.key);
  }
  if (status === 429) {
    tally['429']++;
  }
  if (status >= 200 && status < 300) {
    tally['2xx']++;
  } else if (status >= 300 && status < 400) {
    tally['3xx']++;
  } else if (status >= 400 && status < 500) {
    tally['4xx']++;
  } else if (status >= 500) {
    tally['5xx']++;
  } else {
    tally.other++;
  }
}

function summary(): string {
  return (
    `hostile-input seed=${SEED}: ${tally.total} requests over ${touched.size} operations ` +
    `(of ${operations?.length ?? 0}); 2xx ${tally['2xx']}, 3xx ${tally['3xx']}, ` +
    `4xx ${tally['4xx']} (429: ${tally['429']}), 5xx ${tally['5xx']}` +
    (tally.other ? `, other ${tally.other}` : '') +
    `; connection drops ${tally.drops} ` +
    `(socket errors after a complete answer: ${tally.lateSocketErrors}); replay: ${REPLAY}`
  );
}

// ---------------------------------------------------------------------------------------
// Sending and judging.

function describePayload(payload: unknown): string {
  if (payload === undefined) {
    return '';
  }
  const text = Buffer.isBuffer(payload)
    ? payload.toString('latin1')
    : typeof payload === 'string'
      ? payload
      : serialize(payload);
  const shown = JSON.stringify(text.slice(0, 160));
  return ` body=${shown}${text.length > 160 ? `…(${text.length} chars)` : ''}`;
}

function isOauth(url: string): boolean {
  return url.startsWith('/oauth/');
}

/** A 5xx fails; a 4xx must be the house envelope (the IP bucket's 429 and /oauth/* aside). */
function judge(
  answer: { status: number; contentType: string; body: string },
  url: string,
  where: string,
): void {
  // Soft for the first SOFT_FAILURES failures, so that one run lists every defect it finds
  // (and the tally stays complete); hard after that, so a broken app does not flood the log.
  const check = failures < SOFT_FAILURES ? expect.soft : expect;
  const ipBucket429 = answer.status === 429 && answer.contentType.startsWith('text/plain');
  let envelope: Record<string, unknown> | undefined;
  if (answer.status >= 400 && !isOauth(url) && !ipBucket429) {
    try {
      envelope = JSON.parse(answer.body);
    } catch {
      envelope = {};
    }
  }
  const ok =
    answer.status < 500 &&
    (envelope === undefined ||
      (typeof envelope.error === 'string' &&
        typeof envelope.message === 'string' &&
        envelope.code === answer.status));
  if (ok) {
    return;
  }
  failures++;
  check(answer.status, where).toBeLessThan(500);
  if (envelope) {
    check(envelope, `not the house envelope: ${where}`).toEqual(
      expect.objectContaining({
        error: expect.any(String),
        message: expect.any(String),
        code: answer.status,
      }),
    );
  }
}

async function send(op: Operation | undefined, options: InjectOptions & { url: string }) {
  // Every request in a fresh rate-limit minute: this file is about input, not limits.
  t.clock.advance(61_000);
  const payload = options.payload;
  const request = {
    ...options,
    payload:
      payload !== undefined && typeof payload !== 'string' && !Buffer.isBuffer(payload)
        ? serialize(payload)
        : payload,
  } as InjectOptions;
  const head = `seed=${SEED} ${options.method ?? 'GET'} ${options.url.slice(0, 160)}${describePayload(payload)}`;
  let res: Awaited<ReturnType<TestApp['app']['inject']>>;
  try {
    res = await t.app.inject(request);
  } catch (error) {
    throw new Error(`${head} → inject failed: ${String(error)} (replay: ${REPLAY})`);
  }
  record(res.statusCode, op);
  const where = `${head} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  judge(
    {
      status: res.statusCode,
      contentType: String(res.headers['content-type'] ?? ''),
      body: res.body,
    },
    options.url,
    where,
  );
  return res;
}

function credentialFor(op: Operation): Record<string, string> {
  if (op.security.includes('deviceKey')) {
    return { 'x-device-key': deviceKey };
  }
  if (op.security.includes('session')) {
    return session.auth;
  }
  if (op.security.includes('apiKey')) {
    return keyAuth;
  }
  return {};
}

function idsFor(op: Operation): Ids {
  const own = op.path.startsWith('/api/v1/developer/') ? realIds.developer : realIds.session;
  return { ...realIds.shared, ...own };
}

/**
 * The operation's path with its parameters filled: real resources (not for DELETE) or ids
 * from the PRNG, and optionally one parameter given a malformed value.
 */
function concretePath(
  op: Operation,
  rng: Rng,
  options: { real?: boolean; malformed?: { param: string; value: string } } = {},
): string {
  const malformed = options.malformed;
  // With one parameter malformed nothing can match, so the others may be real even for
  // DELETE (the malformed one is then the only thing wrong).
  const known: Ids = (options.real && op.method !== 'DELETE') || malformed ? idsFor(op) : {};
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (malformed?.param === name) {
      return malformed.value;
    }
    const real = known[name];
    if (real !== undefined) {
      return encodeURIComponent(real);
    }
    if (name === 'did') {
      return `did:ocss:${rng.bytes(6).toString('hex')}`;
    }
    if (name === 'n') {
      return String(1 + rng.int(1000));
    }
    return rng.uuid();
  });
}

// ---------------------------------------------------------------------------------------
// Bodies from the schema.

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PUBLIC_KEY = Buffer.alloc(32, 7);
const PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([ED25519_SPKI_PREFIX, PUBLIC_KEY]).toString('base64')}\n-----END PUBLIC KEY-----\n`;

/** Plausible values the schema alone cannot give: real ids, a reachable-but-refused URL … */
function hintFor(op: Operation): Hint {
  const ids = idsFor(op);
  return (name, s) => {
    if (s.type !== 'string') {
      return name === 'events' && s.type === 'array' ? ['test'] : undefined;
    }
    switch (name) {
      case 'family_id':
      case 'scope_family_id':
        return ids.familyID;
      case 'user_id':
        return session.userId;
      case 'platform_id':
      case 'platform_ids':
        return ids.platformID;
      case 'category':
        return ids.category;
      case 'did':
        return 'did:ocss:hostile';
      case 'public_key_b64url':
        return PUBLIC_KEY.toString('base64url');
      case 'public_key_pem':
        return PUBLIC_KEY_PEM;
      case 'grant_type':
        return 'authorization_code';
    }
    if (/(^|_)url$/.test(name)) {
      return UNREACHABLE_URL;
    }
    return undefined;
  };
}

const sampledBodies = new Map<string, unknown>();

/** A valid-looking body: every required field (nested ones too) with a plausible value. */
function baseBody(op: Operation): unknown {
  if (!sampledBodies.has(op.key)) {
    sampledBodies.set(op.key, schemas.sample(op.bodySchema, '', hintFor(op)));
  }
  return sampledBodies.get(op.key);
}

const conditionalBodies = new Map<string, unknown>();

/**
 * The base bodies: [0] the sampled one, [1] the one whose root `if` holds (a device report of
 * type `viewing`, whose payload fields are then checked), or [0] again when there is none.
 */
function baseBodies(op: Operation): [unknown, unknown] {
  if (!conditionalBodies.has(op.key)) {
    conditionalBodies.set(
      op.key,
      schemas.conditionalSample(op.bodySchema, hintFor(op)) ?? baseBody(op),
    );
  }
  return [baseBody(op), conditionalBodies.get(op.key)];
}

/** The base body with every optional field filled too. */
function fullBody(op: Operation): unknown {
  const hint = hintFor(op);
  let body = baseBody(op);
  for (const field of schemas.fieldPaths(op.bodySchema)) {
    if (!field.required && typeof field.path.at(-1) === 'string') {
      body = withValue(
        body,
        field.path,
        schemas.sample(field.schema, String(field.path.at(-1)), hint),
      );
    }
  }
  return body;
}

function fieldName(field: FieldPath): string {
  return String(field.path.filter((p) => typeof p === 'string').at(-1) ?? '');
}

/** What every field gets, plus what its type, limits and format call for (no sampling). */
function valuesFor(field: FieldPath, hint: Hint): unknown[] {
  const s = field.schema;
  const types = schemas.types(s);
  const name = fieldName(field);
  const values: unknown[] = [...EVERY_FIELD];
  const enumValues = Array.isArray(s.enum) ? (s.enum as unknown[]) : undefined;
  if (types.has('string')) {
    const max = typeof s.maxLength === 'number' ? s.maxLength : undefined;
    const min = typeof s.minLength === 'number' ? s.minLength : 0;
    if (max !== undefined) {
      // At the limit (ASCII, and 4-byte UTF-8: the limit counts code points), and one over.
      values.push('x'.repeat(max), '💥'.repeat(max), 'x'.repeat(max + 1));
    }
    if (min > 1) {
      values.push('x'.repeat(min - 1));
    }
    if (s.format === 'uuid' || /(^|_)id$/.test(name)) {
      values.push(
        'not-a-uuid',
        '00000000-0000-0000-0000-000000000000',
        'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
        '{00000000-0000-4000-8000-000000000000}',
        '00000000-0000-4000-8000-000000000000\n',
        '00000000000040008000000000000000',
      );
    }
    if (s.format === 'date-time' || /_at$/.test(name)) {
      values.push(
        '2015-02-30T00:00:00Z',
        '0000-01-01T00:00:00Z',
        '+275760-09-13T00:00:00.001Z',
        '9999-12-31T23:59:60Z',
        '2026-01-15',
        '2026-01-15T12:00:00+25:00',
        'yesterday',
      );
    }
    if (/date/.test(name) || String(s.description ?? '').includes('YYYY-MM-DD')) {
      values.push(
        '2015-02-30',
        '0000-00-00',
        '0001-01-01',
        '9999-12-31',
        '1800-01-01',
        '2100-01-01',
        '2015-2-3',
        '20150203',
        '2015-02-03T00:00:00Z',
        '-001-01-01',
        '+275760-09-13',
      );
    }
    if (/url$/.test(name)) {
      values.push(
        'javascript:alert(1)',
        'file:///etc/passwd',
        'ftp://127.0.0.1:9/',
        'http://',
        'https://[::1',
        '//127.0.0.1:9/',
        'http://user:pa ss@127.0.0.1:9/',
        'http://127.0.0.1:99999/',
      );
    }
    if (name === 'did') {
      values.push('did:', 'did:ocss:', 'did:web:127.0.0.1', `did:ocss:${'x'.repeat(300)}`);
    }
    if (typeof s.pattern === 'string') {
      values.push('-x', 'x y', '../x', 'x\n', 'X'.repeat(300));
    }
  }
  if (enumValues) {
    const first = String(enumValues[0]);
    values.push('NOT_IN_ENUM', first.toUpperCase(), `${first} `, `${first}\u0000`);
  }
  if (types.has('integer') || types.has('number')) {
    values.push(...NUMBER_LITERALS.map((literal) => new RawJson(literal)));
    if (typeof s.minimum === 'number') {
      values.push(s.minimum - 1, s.minimum);
    }
    if (typeof s.maximum === 'number') {
      values.push(s.maximum + 1, s.maximum);
    }
  }
  if (types.has('boolean')) {
    values.push(0, 1, 'true', 'false');
  }
  if (types.has('object')) {
    const maxProperties = typeof s.maxProperties === 'number' ? s.maxProperties + 1 : 1_000;
    values.push(
      [{}],
      ['x'],
      new RawJson('{"__proto__":{"polluted":true}}'),
      new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
      Object.fromEntries(Array.from({ length: maxProperties }, (_, i) => [`k${i}`, 'v'])),
      JSON.parse(`${'{"a":'.repeat(64)}1${'}'.repeat(64)}`),
      { '': 'x', 'a\u0000': 'x' },
    );
  }
  if (types.has('array')) {
    const items = schemas.arrayBranch(s)?.items;
    const item = items === undefined ? 'x' : schemas.sample(items, name, hint);
    const maxItems = typeof s.maxItems === 'number' ? s.maxItems : undefined;
    values.push(
      { 0: 'x' },
      { length: 1 },
      [null],
      [[]],
      [{}],
      [item, item],
      Array.from({ length: 10_000 }, () => item),
      ['a\u0000b'],
      ['\ud800'],
      ['x'.repeat(70_000)],
    );
    if (maxItems !== undefined) {
      values.push(Array.from({ length: maxItems + 1 }, () => item));
    }
  }
  return values;
}

// ---------------------------------------------------------------------------------------
// Set-up.

async function fixtureIds(prefix: string, auth: Record<string, string>): Promise<Ids> {
  const call = async (method: string, url: string, payload?: object) => {
    const res = await t.app.inject({
      method: method as never,
      url,
      headers: auth,
      ...(payload ? { payload } : {}),
    });
    expect(res.statusCode, `fixture ${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json();
  };
  const quick = await call('POST', `${prefix}/setup/quick`, {
    child_name: 'Hostile',
    birth_date: '2016-05-01',
  });
  const familyID: string = quick.family.id;
  const childID: string = quick.child.id;
  const members = await call('GET', `${prefix}/families/${familyID}/members`);
  const categories = await call('GET', `${prefix}/rules/categories`);
  const platforms = (await call('GET', `${prefix}/platforms`)) as Array<{
    id: string;
    auth_type: string;
  }>;
  const systems = await call('GET', `${prefix}/ratings/systems`);
  const platformID = (platforms.find((p) => p.auth_type !== 'oauth2') ?? platforms[0])?.id ?? '';
  const connection = await call('POST', `${prefix}/families/${familyID}/connections`, {
    platform_id: platformID,
  });
  const device = await call('POST', `${prefix}/children/${childID}/devices`, {
    device_name: 'hostile tablet',
  });
  const webhook = await call('POST', `${prefix}/webhooks`, {
    family_id: familyID,
    url: UNREACHABLE_URL,
    events: ['test'],
  });
  const delivery = await call('POST', `${prefix}/webhooks/${webhook.id}/test`);
  const job = await call('POST', `${prefix}/children/${childID}/enforce`, {});
  deviceKey ||= device.device_key;
  const ids: Ids = {
    familyID,
    childID,
    childId: childID,
    policyID: quick.policy.id,
    category: categories[0].category,
    platformID,
    systemID: systems[0].id,
    connectionID: connection.id,
    deviceID: device.device.id,
    webhookID: webhook.id,
    deliveryID: delivery.id,
    jobID: job.id,
  };
  if (members[0]?.id) {
    ids.memberID = members[0].id;
  }
  return ids;
}

function readOperations(doc: { paths: Record<string, Record<string, unknown>> }): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      const op = raw as {
        requestBody?: { content?: Record<string, { schema?: Schema }> };
        security?: Array<Record<string, unknown>>;
        parameters?: Array<{ in: string; name: string; schema?: Schema }>;
      };
      const parameters = op.parameters ?? [];
      out.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        security: (op.security ?? []).flatMap((requirement) => Object.keys(requirement)),
        hasBody: op.requestBody !== undefined,
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
        queryParams: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, schema: schemas.resolve(p.schema) })),
        headerParams: parameters.filter((p) => p.in === 'header').map((p) => p.name),
      });
    }
  }
  return out;
}

beforeAll(async () => {
  t = await buildTestApp();
  session = await longSession(t);
  const org = await createOrg(t.app, session);
  keyAuth = bearer((await mintKey(t.app, session, org.id)).key);
  // A second key: regenerating it (a POST with real ids) must not cost the file its key.
  const spareKey = await mintKey(t.app, session, org.id);
  const doc = (await t.app.inject({ url: '/openapi.json' })).json();
  openApiDocument = doc;
  schemas = new OpenApiSchemas(doc);
  operations = readOperations(doc);
  realIds.session = await fixtureIds('/api/v1', session.auth);
  realIds.developer = await fixtureIds('/api/v1/developer', keyAuth);
  realIds.shared = { orgId: org.id, keyId: spareKey.id, userId: session.userId };
}, 60_000);

afterAll(async () => {
  // Unconditional: the figures, and the seed to replay a failure with.
  console.log(summary());
  await t?.close();
});

const bodyOperations = () => operations.filter((o) => o.hasBody);
const jsonHeaders = (op: Operation) => ({
  ...credentialFor(op),
  'content-type': 'application/json',
});

describe('hostile input on every operation of the OpenAPI document', () => {
  it('finds the operations and synthesizes a body for each body operation', () => {
    expect(operations.length).toBeGreaterThan(60);
    // Every `$ref` of the document resolves (today they are `#/components/schemas/…` in
    // responses; request bodies are inline, but would be followed the same way).
    const pending = [openApiDocument];
    while (pending.length > 0) {
      const node = pending.pop();
      if (node && typeof node === 'object') {
        if (typeof (node as Schema).$ref === 'string') {
          expect(() => schemas.resolve(node), String((node as Schema).$ref)).not.toThrow();
        }
        pending.push(...Object.values(node));
      }
    }
    for (const op of bodyOperations()) {
      expect(op.bodySchema, `${op.key} has no application/json schema`).toBeDefined();
      expect(baseBody(op), op.key).toBeDefined();
    }
  });

  it('malformed ids in every path parameter', async () => {
    const rng = rngFor('malformed ids');
    for (const op of operations) {
      for (const param of op.path.match(/\{(\w+)\}/g) ?? []) {
        for (const value of MALFORMED_IDS) {
          const url = concretePath(op, rng, { malformed: { param: param.slice(1, -1), value } });
          await send(op, {
            method: op.method as never,
            url,
            headers: op.hasBody ? jsonHeaders(op) : credentialFor(op),
            ...(op.hasBody ? { payload: baseBody(op) as object } : {}),
          });
        }
      }
    }
  }, 180_000);

  it('broken, deep, wrong-typed and oversize bodies, and wrong content types', async () => {
    const rng = rngFor('broken bodies');
    const raw: Array<string | Buffer> = [
      '{',
      '{"a":',
      '[1,2',
      'nul',
      '',
      '{}}',
      '{"a":1,"a":2}',
      '{"__proto__":{"polluted":true}}',
      '\ufeff{}',
      Buffer.from('{"name":"a\u0000b"}'),
      Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0xff, 0x22, 0x7d]),
      deeplyNested(5_000),
      `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
      '[]',
      'null',
      '"text"',
      '12',
      '1e999',
    ];
    const big = `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`;
    for (const op of bodyOperations()) {
      const url = concretePath(op, rng, { real: true });
      const headers = jsonHeaders(op);
      for (const payload of raw) {
        await send(op, { method: op.method as never, url, headers, payload });
      }
      await send(op, { method: op.method as never, url, headers, payload: big });
      for (const contentType of [
        'text/plain',
        'application/xml',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-16',
        'application/jsonx',
        'APPLICATION/JSON',
        '',
      ]) {
        await send(op, {
          method: op.method as never,
          url,
          headers: { ...credentialFor(op), 'content-type': contentType },
          payload: contentType.toLowerCase().startsWith('application/json') ? '{}' : 'a=b',
        });
      }
    }
  }, 180_000);

  it('a valid-looking body, every optional field filled, then each required field missing', async () => {
    const rng = rngFor('required fields');
    for (const op of bodyOperations()) {
      const url = concretePath(op, rng, { real: true });
      const headers = jsonHeaders(op);
      const bodies = baseBodies(op);
      await send(op, { method: op.method as never, url, headers, payload: serialize(bodies[0]) });
      if (bodies[1] !== bodies[0]) {
        await send(op, { method: op.method as never, url, headers, payload: serialize(bodies[1]) });
      }
      await send(op, {
        method: op.method as never,
        url,
        headers,
        payload: serialize(fullBody(op)),
      });
      for (const field of schemas.fieldPaths(op.bodySchema).filter((f) => f.required)) {
        const base = bodies[field.variant];
        // Only where the parent is in the base body (a required field of an optional object
        // is not missing while its object is).
        const parent = field.path
          .slice(0, -1)
          .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], base);
        if (!parent || typeof parent !== 'object') {
          continue;
        }
        await send(op, {
          method: op.method as never,
          url,
          headers,
          payload: serialize(without(base, field.path)),
        });
      }
    }
  }, 180_000);

  it('every body field: each wrong type, null, odd and long strings, out-of-range numbers', async () => {
    for (const op of bodyOperations()) {
      const rng = rngFor(`fields ${op.key}`);
      const url = concretePath(op, rng, { real: true });
      const headers = jsonHeaders(op);
      const hint = hintFor(op);
      const bodies = baseBodies(op);
      for (const field of schemas.fieldPaths(op.bodySchema)) {
        const base = bodies[field.variant];
        const fieldRng = rngFor(`field ${op.key} ${JSON.stringify(field.path)}`);
        const values = valuesFor(field, hint);
        if (schemas.types(field.schema).has('string')) {
          values.push(...fieldRng.sample(ODD_STRINGS, ODD_STRINGS_PER_FIELD));
        }
        for (const value of values) {
          await send(op, {
            method: op.method as never,
            url,
            headers,
            payload: serialize(withValue(base, field.path, value)),
          });
        }
      }
      // And the whole body replaced by each value of every field type.
      for (const value of EVERY_FIELD) {
        await send(op, { method: op.method as never, url, headers, payload: serialize(value) });
      }
    }
  }, 300_000);

  it('seeded fuzz: several fields hostile at once, required fields dropped, unknown keys', async () => {
    const extraKeys = ['id', 'created_at', 'org_id', 'is_admin', 'role', 'constructor', '', 'x'];
    for (const op of bodyOperations()) {
      const rng = rngFor(`fuzz ${op.key}`);
      const url = concretePath(op, rng, { real: true });
      const headers = jsonHeaders(op);
      const hint = hintFor(op);
      const fields = schemas.fieldPaths(op.bodySchema);
      const required = fields.filter((f) => f.required);
      const pools = fields.map((field) => [
        ...valuesFor(field, hint),
        ...(schemas.types(field.schema).has('string') ? ODD_STRINGS : []),
      ]);
      const bodies = baseBodies(op);
      for (let round = 0; round < FUZZ_PER_OPERATION; round++) {
        let body = bodies[rng.int(2)];
        const mutations = 1 + rng.int(3);
        for (let m = 0; m < mutations; m++) {
          const kind = rng.int(10);
          if (kind < 7 && fields.length > 0) {
            const index = rng.int(fields.length);
            const field = fields[index] as FieldPath;
            body = withValue(body, field.path, rng.pick(pools[index] as unknown[]));
          } else if (kind < 8 && required.length > 0) {
            body = without(body, rng.pick(required).path);
          } else {
            body = withValue(body, [rng.pick(extraKeys)], rng.pick(EVERY_FIELD));
          }
        }
        await send(op, { method: op.method as never, url, headers, payload: serialize(body) });
      }
    }
  }, 180_000);

  it('hostile query strings and headers, and garbage and wrong-scheme credentials', async () => {
    const rng = rngFor('query and credentials');
    const garbage = [
      { authorization: 'Bearer \u0001\u0002' },
      { authorization: 'Basic Zm9vOmJhcg==' },
      { authorization: 'Digest username="x"' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { authorization: `Bearer svc_test_${'A'.repeat(500)}` },
      { authorization: `Bearer ${'x'.repeat(8_000)}` },
      { authorization: 'Bearer a.b.c' },
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
      { authorization: `${session.auth.authorization}, Bearer x` },
      { authorization: `bearer ${keyAuth.authorization?.slice(7)}x` },
      { 'x-api-key': 'svc_' },
      { 'x-api-key': `svc_live_${'A'.repeat(64)}` },
      { 'x-device-key': 'svcdev_x' },
      { 'x-sandbox-session': 'x'.repeat(500) },
      { 'x-sandbox-session': '' },
    ];
    for (const op of operations) {
      const url = concretePath(op, rng, { real: true });
      const body = op.hasBody ? { payload: serialize(baseBody(op)) } : {};
      const auth = op.hasBody ? jsonHeaders(op) : credentialFor(op);
      await send(op, {
        method: op.method as never,
        url: `${url}${HOSTILE_QUERY}`,
        headers: auth,
        ...body,
      });
      for (const { name } of op.queryParams) {
        for (const value of HOSTILE_QUERY_VALUES) {
          await send(op, {
            method: op.method as never,
            url: `${url}?${name}=${value}`,
            headers: auth,
            ...body,
          });
        }
        // The parameter twice, and as an array.
        await send(op, {
          method: op.method as never,
          url: `${url}?${name}=1&${name}=2`,
          headers: auth,
          ...body,
        });
        await send(op, {
          method: op.method as never,
          url: `${url}?${name}[]=1`,
          headers: auth,
          ...body,
        });
      }
      for (const name of op.headerParams) {
        for (const value of HOSTILE_HEADER_VALUES) {
          await send(op, {
            method: op.method as never,
            url,
            headers: { ...auth, [name]: value },
            ...body,
          });
        }
      }
      if (op.method !== 'GET' && op.path.startsWith('/api/v1/')) {
        for (const key of ['', 'x'.repeat(1_000), '💥', '\u0001']) {
          await send(op, {
            method: op.method as never,
            url: concretePath(op, rng),
            headers: { ...auth, 'idempotency-key': key },
            ...body,
          });
        }
      }
      for (const headers of garbage) {
        await send(op, {
          method: op.method as never,
          url: concretePath(op, rng),
          headers: op.hasBody ? { ...headers, 'content-type': 'application/json' } : headers,
          ...body,
        });
      }
    }
    const health = await send(undefined, { method: 'GET', url: '/health' });
    expect(health.statusCode, `seed=${SEED} /health`).toBe(200);
  }, 180_000);

  it('over real sockets: every body operation gets a complete answer, no connection drops', async () => {
    const rng = rngFor('sockets');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const big = Buffer.from(`{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    try {
      for (const op of bodyOperations()) {
        const url = concretePath(op, rng, { real: true });
        const stringField = schemas
          .fieldPaths(op.bodySchema)
          .find((f) => schemas.types(f.schema).has('string'))?.path ?? ['name'];
        const base = baseBody(op);
        const cases: WireCase[] = [
          { what: 'broken JSON', body: '{"a":' },
          { what: 'JSON nested 5 000 deep', body: deeplyNested(5_000) },
          { what: '2 MiB body with Content-Length', body: big },
          { what: '2 MiB body, chunked', body: big, chunked: true },
          { what: 'NUL', body: serialize(withValue(base, stringField, 'a\u0000b')) },
          { what: 'raw NUL byte', body: Buffer.from('{"x":"a\u0000b"}') },
          { what: 'unpaired surrogate', body: serialize(withValue(base, stringField, '\ud800')) },
          {
            what: 'invalid UTF-8',
            body: Buffer.from([
              0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0xc0, 0x22, 0x7d,
            ]),
          },
          {
            what: '70 000 characters',
            body: serialize(withValue(base, stringField, 'x'.repeat(70_000))),
          },
          { what: 'wrong content type', body: 'a=b', contentType: 'text/plain' },
          { what: 'no content type', body: '{}', contentType: '' },
        ];
        for (const wire of cases) {
          await sendOverSocket(op, agent, port, url, wire);
        }
      }
      const health = await wireRequest(agent, port, {
        method: 'GET',
        path: '/health',
        headers: {},
      });
      record(health.status);
      expect(health.status, `seed=${SEED} /health over a socket: ${health.body}`).toBe(200);
    } finally {
      agent.destroy();
    }
  }, 300_000);

  it('/health stays 200', async () => {
    const health = await send(undefined, { method: 'GET', url: '/health' });
    expect(health.statusCode, `seed=${SEED} /health: ${health.body}`).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------
// Real sockets.

interface WireCase {
  what: string;
  body: string | Buffer;
  contentType?: string;
  chunked?: boolean;
}

interface WireAnswer {
  status: number;
  contentType: string;
  body: string;
  /** A socket error that came after the whole answer had arrived. */
  lateError?: string;
}

/**
 * One request over a keep-alive agent. It resolves with the answer once the whole answer has
 * arrived, and rejects on a socket error before that (a dropped connection) or after 20 s
 * without one (a hung connection). A 413 may come before the server has read the 2 MiB the
 * client is still writing; the server then discards the rest or closes the connection, and
 * Node's client can report EPIPE/ECONNRESET on its write *after* the answer arrived. A
 * correct client has its answer then, so that counts as answered (and is tallied apart).
 */
function wireRequest(
  agent: Agent,
  port: number,
  options: {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: string | Buffer;
    chunked?: boolean;
  },
): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    let answer: WireAnswer | undefined;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) {
        return;
      }
      settled = true;
      clearTimeout(timer);
      if (answer) {
        resolve(answer);
      } else {
        reject(error ?? new Error('no answer'));
      }
    };
    const body =
      options.body === undefined
        ? undefined
        : Buffer.isBuffer(options.body)
          ? options.body
          : Buffer.from(options.body);
    const headers: Record<string, string | number> = { ...options.headers };
    if (body && !options.chunked) {
      headers['content-length'] = body.length;
    }
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: options.method,
      path: options.path,
      headers,
      agent,
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish(new Error('no complete answer within 20 s'));
    }, 20_000);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        answer = {
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
        };
        finish();
      });
      res.on('error', (error) => finish(error));
      res.on('aborted', () => finish(new Error('answer aborted mid-body')));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (answer) {
        answer.lateError = error.code ?? error.message;
        tally.lateSocketErrors++;
        return;
      }
      finish(error);
    });
    if (body && options.chunked) {
      // Written in 64 KiB chunks with no Content-Length: the server learns the size late.
      const chunkSize = 64 * 1024;
      const writeFrom = (offset: number): void => {
        while (offset < body.length) {
          const ok = req.write(body.subarray(offset, offset + chunkSize));
          offset += chunkSize;
          if (!ok) {
            req.once('drain', () => writeFrom(offset));
            return;
          }
        }
        req.end();
      };
      writeFrom(0);
    } else {
      req.end(body);
    }
  });
}

async function sendOverSocket(
  op: Operation,
  agent: Agent,
  port: number,
  url: string,
  wire: WireCase,
): Promise<void> {
  t.clock.advance(61_000);
  const headers: Record<string, string> = { ...credentialFor(op) };
  const contentType = wire.contentType ?? 'application/json';
  if (contentType) {
    headers['content-type'] = contentType;
  }
  const head = `seed=${SEED} socket ${op.method} ${url} (${wire.what})${describePayload(wire.body)}`;
  let answer: WireAnswer;
  try {
    answer = await wireRequest(agent, port, {
      method: op.method,
      path: url,
      headers,
      body: wire.body,
      chunked: wire.chunked,
    });
  } catch (error) {
    tally.drops++;
    touched.add(op.key);
    expect.fail(`${head} → connection dropped: ${String(error)} (replay: ${REPLAY})`);
  }
  record(answer.status, op);
  judge(answer, url, `${head} → ${answer.status} ${answer.body.slice(0, 300)}`);
}
