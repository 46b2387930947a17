// Property-based: random bodies (and random path ids) thrown at every write route of the
// product plane. Whatever arrives, the answer is never a 5xx, a 4xx comes in the house
// envelope, and a 4xx leaves the database exactly as it was (no partial write).
// fast-check prints the seed and the shrunk counterexample when a property fails; replay it
// with FC_SEED=<seed>.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULE_REGISTRY } from '../src/modules/rules/registry.js';
import { buildTestApp, type TestApp } from './app.js';

const RUNS = Number(process.env.FC_RUNS ?? 40);
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const HEADERS = { 'x-sandbox-session': 'properties' };
const TABLES = ['families', 'family_members', 'children', 'policies', 'policy_rules'] as const;

let t: TestApp;
let ids: {
  family: string;
  child: string;
  policy: string;
  memberFamily: string;
  member: string;
  otherUser: string;
};

/** Each request in a fresh rate-limit minute: the limiter is not what this file tests. */
function nextMinute(): void {
  t.clock.advance(61_000);
}

/** Every row of the product tables, in a stable order: the whole state a write could touch. */
async function snapshot(): Promise<string> {
  const tables = await Promise.all(
    TABLES.map((table) =>
      t.database.handle.db.selectFrom(table).selectAll().orderBy('id').execute(),
    ),
  );
  return JSON.stringify(tables);
}

// Values that have broken services before: wrong types, edge strings, edge numbers.
const oddString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    'x'.repeat(256),
    'x'.repeat(70_000),
    '2019-02-30',
    '2010-13-01',
    '2010-01-01',
    '0000-00-00',
    '9999-12-31',
    '1900-01-01',
    '2026-01-15T00:00:00Z',
    'owner',
    'guardian',
    'strict',
    'null',
    '<script>',
    '../../etc/passwd',
    "'; drop table families; --",
  ),
);
const oddNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, Number.MAX_VALUE, 1e308, -0),
);
const leaf = fc.oneof(oddString, oddNumber, fc.boolean(), fc.constant(null));
const anyValue = fc.oneof(
  { weight: 3, arbitrary: leaf },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 3 }) },
);

/**
 * A body built from the route's own fields, each absent, valid or odd, so that some requests
 * pass validation and reach the database; plus whole-body noise and broken JSON.
 */
function bodyWith(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = fc.record(
    Object.fromEntries(
      Object.entries(fields).map(([name, valid]) => [
        name,
        fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: anyValue }),
      ]),
    ),
    { requiredKeys: [] },
  );
  return fc.oneof(
    { weight: 8, arbitrary: record },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    { weight: 1, arbitrary: fc.constantFrom('{', '[1,', '{"a":}', 'null', '"x"', '') },
  );
}

const validName = fc.string({ minLength: 1, maxLength: 40 });
const validBirthDate = fc
  .date({ min: new Date('1995-01-01'), max: new Date('2027-01-01'), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10));
const validRole = fc.constantFrom('owner', 'parent', 'guardian');
const validStrictness = fc.constantFrom('relaxed', 'recommended', 'strict');
const validPriority = fc.integer({ min: -5, max: 2000 });

const registered = RULE_REGISTRY.map((entry) => entry.category);
const schemaKeys = [
  ...new Set(
    RULE_REGISTRY.flatMap((entry) =>
      Object.keys((entry.config_schema.properties as object | undefined) ?? {}),
    ),
  ),
];

/** A rule body for one category: its default config, mutated or replaced at random. */
function ruleFor(category: string): fc.Arbitrary<Record<string, unknown>> {
  const defaults = RULE_REGISTRY.find((entry) => entry.category === category)?.default_config ?? {};
  const config = fc.oneof(
    { weight: 2, arbitrary: fc.constant(defaults) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...Object.keys(defaults), ...schemaKeys), anyValue)
        .map(([key, value]) => ({ ...defaults, [key]: value })),
    },
    { weight: 1, arbitrary: anyValue },
  );
  return bodyWith({ enabled: fc.boolean(), config }) as fc.Arbitrary<Record<string, unknown>>;
}

const anyCategory = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...registered) },
  { weight: 1, arbitrary: oddString },
);

const pathId = (real: () => string) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(null).map(() => real()) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom('not-a-uuid', '%00', 'x'.repeat(300), '1') },
  );

/** Every UTF-8 byte escaped (a lone surrogate becomes U+FFFD, as any client would send). */
function percentEncoded(text: string): string {
  return [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

interface WriteRoute {
  name: string;
  method: 'POST' | 'PATCH' | 'PUT';
  request: fc.Arbitrary<{ url: string; body: unknown }>;
}

function at(
  url: fc.Arbitrary<string>,
  body: fc.Arbitrary<unknown>,
): fc.Arbitrary<{ url: string; body: unknown }> {
  return fc.record({ url, body });
}

const routes = (): WriteRoute[] => [
  {
    name: 'POST /families',
    method: 'POST',
    request: at(fc.constant('/api/v1/families'), bodyWith({ name: validName })),
  },
  {
    name: 'PATCH /families/{id}',
    method: 'PATCH',
    request: at(
      pathId(() => ids.family).map((id) => `/api/v1/families/${id}`),
      bodyWith({ name: validName }),
    ),
  },
  {
    name: 'POST /families/{id}/members',
    method: 'POST',
    request: at(
      // Members change on a family of their own, so that a random demotion of the caller
      // does not turn every later route into a 403.
      pathId(() => ids.memberFamily).map((id) => `/api/v1/families/${id}/members`),
      bodyWith({ user_id: fc.constant(null).map(() => ids.otherUser), role: validRole }),
    ),
  },
  {
    name: 'PATCH /families/{id}/members/{id}',
    method: 'PATCH',
    request: at(
      pathId(() => ids.member).map((id) => `/api/v1/families/${ids.memberFamily}/members/${id}`),
      bodyWith({ role: validRole }),
    ),
  },
  {
    name: 'POST /families/{id}/children',
    method: 'POST',
    request: at(
      pathId(() => ids.family).map((id) => `/api/v1/families/${id}/children`),
      bodyWith({ name: validName, birth_date: validBirthDate, avatar_url: fc.webUrl() }),
    ),
  },
  {
    name: 'PATCH /children/{id}',
    method: 'PATCH',
    request: at(
      pathId(() => ids.child).map((id) => `/api/v1/children/${id}`),
      bodyWith({ name: validName, birth_date: validBirthDate, avatar_url: fc.webUrl() }),
    ),
  },
  {
    name: 'POST /children/{id}/policies',
    method: 'POST',
    request: at(
      pathId(() => ids.child).map((id) => `/api/v1/children/${id}/policies`),
      bodyWith({ name: validName, priority: validPriority }),
    ),
  },
  {
    name: 'PATCH /policies/{id}',
    method: 'PATCH',
    request: at(
      pathId(() => ids.policy).map((id) => `/api/v1/policies/${id}`),
      bodyWith({ name: validName, priority: validPriority }),
    ),
  },
  {
    name: 'POST /policies/{id}/generate-from-age',
    method: 'POST',
    request: at(
      pathId(() => ids.policy).map((id) => `/api/v1/policies/${id}/generate-from-age`),
      bodyWith({ strictness: validStrictness }),
    ),
  },
  {
    name: 'PUT /policies/{id}/rules/{category}',
    method: 'PUT',
    request: fc
      .tuple(
        pathId(() => ids.policy),
        anyCategory,
      )
      .chain(([id, category]) =>
        at(
          fc.constant(`/api/v1/policies/${id}/rules/${percentEncoded(category)}`),
          ruleFor(category),
        ),
      ),
  },
  {
    name: 'PUT /policies/{id}/rules (bulk)',
    method: 'PUT',
    request: at(
      pathId(() => ids.policy).map((id) => `/api/v1/policies/${id}/rules`),
      bodyWith({
        rules: fc.array(
          anyCategory.chain((category) =>
            ruleFor(category).map((rule) =>
              typeof rule === 'object' && rule !== null && !Array.isArray(rule)
                ? { category, ...rule }
                : rule,
            ),
          ),
          { maxLength: 6 },
        ),
      }),
    ),
  },
  {
    name: 'POST /setup/quick',
    method: 'POST',
    request: at(
      fc.constant('/api/v1/setup/quick'),
      bodyWith({
        child_name: validName,
        birth_date: validBirthDate,
        family_id: fc.oneof(
          fc.constant(null).map(() => ids.family),
          fc.uuid(),
        ),
        strictness: validStrictness,
      }),
    ),
  },
];

/** The user id of another sandbox session (a candidate family member). */
async function sessionUserId(name: string): Promise<string> {
  const made = await t.app.inject({
    method: 'POST',
    url: '/api/v1/families',
    headers: { 'x-sandbox-session': name },
    payload: { name: 'Elsewhere' },
  });
  const members = await t.app.inject({
    url: `/api/v1/families/${made.json().id}/members`,
    headers: { 'x-sandbox-session': name },
  });
  return members.json()[0].user_id;
}

beforeAll(async () => {
  t = await buildTestApp();
  const setup = await t.app.inject({
    method: 'POST',
    url: '/api/v1/setup/quick',
    headers: HEADERS,
    payload: { child_name: 'Ada', birth_date: '2016-05-01' },
  });
  expect(setup.statusCode).toBe(201);
  const body = setup.json();
  const memberFamily = await t.app.inject({
    method: 'POST',
    url: '/api/v1/families',
    headers: HEADERS,
    payload: { name: 'Members' },
  });
  const members = await t.app.inject({
    url: `/api/v1/families/${memberFamily.json().id}/members`,
    headers: HEADERS,
  });
  ids = {
    family: body.family.id,
    child: body.child.id,
    policy: body.policy.id,
    memberFamily: memberFamily.json().id,
    member: members.json()[0].id,
    otherUser: await sessionUserId('someone-else'),
  };
});
afterAll(() => t.close());

describe('write routes under random input', () => {
  for (const route of routes()) {
    it(`${route.name}: never 5xx; a 4xx is an envelope and changes nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(route.request, async ({ url, body }) => {
          const before = await snapshot();
          nextMinute();
          const res = await t.app.inject({
            method: route.method,
            url,
            headers: { ...HEADERS, 'content-type': 'application/json' },
            payload: typeof body === 'string' ? body : JSON.stringify(body),
          });
          expect(res.statusCode, res.body).toBeLessThan(500);
          console.log('TALLY', route.name, res.statusCode, res.json().message);
          if (res.statusCode >= 400) {
            const envelope = res.json();
            expect(typeof envelope.error).toBe('string');
            expect(typeof envelope.message).toBe('string');
            expect(await snapshot()).toBe(before);
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }, 120_000);
  }

  it('quick setup, whatever it accepts, answers with exactly 20 rules written in full', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          child_name: fc.string({ minLength: 1, maxLength: 40 }),
          birth_date: fc
            .date({ min: new Date('2001-02-01'), max: new Date('2026-01-14'), noInvalidDate: true })
            .map((date) => date.toISOString().slice(0, 10)),
          strictness: fc.constantFrom('relaxed', 'recommended', 'strict', undefined),
        }),
        async (body) => {
          nextMinute();
          const res = await t.app.inject({
            method: 'POST',
            url: '/api/v1/setup/quick',
            headers: HEADERS,
            payload: body,
          });
          if (res.statusCode !== 201) {
            // Only a blank name may be refused.
            expect(res.statusCode, res.body).toBe(400);
            expect(body.child_name.trim()).toBe('');
            return;
          }
          const created = res.json();
          expect(created.rules).toHaveLength(20);
          const stored = await t.database.handle.db
            .selectFrom('policy_rules')
            .select('category')
            .where('policy_id', '=', created.policy.id)
            .execute();
          expect(stored).toHaveLength(20);
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }, 120_000);
});
