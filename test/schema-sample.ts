// Seeded randomness and request bodies synthesized from the OpenAPI document, for the
// hostile-input test: a valid-looking body per operation, the paths of its fields (nested
// ones included), and a JSON serializer that can carry number literals JSON.stringify cannot
// write (9007199254740993, 1e999, -0).

/** mulberry32: a tiny seeded PRNG (32-bit state). The same seed gives the same sequence. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) {
      throw new Error('pick from an empty list');
    }
    return items[this.int(items.length)] as T;
  }

  /** k distinct items (all of them when k >= length), in the order drawn. */
  sample<T>(items: readonly T[], k: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < k && pool.length > 0) {
      out.push(pool.splice(this.int(pool.length), 1)[0] as T);
    }
    return out;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.int(256);
    }
    return out;
  }

  /** A UUID-shaped id (version 4 and variant bits set) from the PRNG's bytes. */
  uuid(): string {
    const b = this.bytes(16);
    b[6] = ((b[6] as number) & 0x0f) | 0x40;
    b[8] = ((b[8] as number) & 0x3f) | 0x80;
    const hex = b.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

/** A seed for one named stream of a run: the run's seed mixed with an FNV-1a hash of the name. */
export function deriveSeed(seed: number, label: string): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < label.length; i++) {
    hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193);
  }
  return hash >>> 0;
}

export type Schema = Record<string, unknown>;
export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';
export const JSON_TYPES: readonly JsonType[] = [
  'string',
  'integer',
  'number',
  'boolean',
  'object',
  'array',
  'null',
];

/** A number (or any JSON) written into the body as this exact text. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a body that may hold RawJson values. */
export function serialize(body: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_key, value: unknown) =>
    value instanceof RawJson ? `\u0000raw${raws.push(value.text) - 1}\u0000` : value,
  );
  return (text ?? '').replace(/"\\u0000raw(\d+)\\u0000"/g, (_, i: string) => raws[Number(i)] ?? '');
}

export interface FieldPath {
  /** Keys and array indexes from the body's root. */
  path: Array<string | number>;
  schema: Schema;
  /** Required by its parent object. */
  required: boolean;
  /**
   * 0 for a field of the body as sampled; 1 for a field that only counts when the body's
   * root `if` holds (see `conditionalSample`), so it is mutated in that variant of the body.
   */
  variant: 0 | 1;
}

/** What a test supplies for a field it knows better (real ids, reachable URLs). */
export type Hint = (name: string, schema: Schema) => unknown;

const MAX_DEPTH = 4;

export class OpenApiSchemas {
  constructor(private readonly doc: { components?: { schemas?: Record<string, Schema> } }) {}

  /**
   * Follows `$ref`s: JSON pointers into the document (`#/components/schemas/Child`) and the
   * bare names Fastify gives shared schemas (`ErrorEnvelope#`).
   */
  resolve(schema: unknown): Schema {
    let current = (schema ?? {}) as Schema;
    for (let hops = 0; typeof current.$ref === 'string'; hops++) {
      if (hops > 32) {
        throw new Error(`$ref cycle at ${current.$ref}`);
      }
      const ref = current.$ref as string;
      let target: unknown;
      if (ref.startsWith('#/')) {
        target = ref
          .slice(2)
          .split('/')
          .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
          .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], this.doc);
      } else {
        target = this.doc.components?.schemas?.[ref.replace(/#.*$/, '')];
      }
      if (target === undefined) {
        throw new Error(`unresolvable $ref ${ref}`);
      }
      const { $ref: _ref, ...siblings } = current;
      current = { ...(target as Schema), ...siblings };
    }
    return current;
  }

  /** The JSON types a schema admits ('number' admits integers too). */
  types(schema: unknown): Set<JsonType> {
    const s = this.resolve(schema);
    const out = new Set<JsonType>();
    const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (alternatives) {
      for (const alternative of alternatives) {
        for (const type of this.types(alternative)) {
          out.add(type);
        }
      }
      return out;
    }
    if (typeof s.type === 'string') {
      out.add(s.type as JsonType);
    } else if (Array.isArray(s.type)) {
      for (const type of s.type) {
        out.add(type as JsonType);
      }
    } else if ('const' in s || Array.isArray(s.enum)) {
      for (const value of 'const' in s ? [s.const] : (s.enum as unknown[])) {
        out.add(jsonTypeOf(value));
      }
    } else if (s.properties || s.additionalProperties !== undefined) {
      out.add('object');
    } else if (s.items) {
      out.add('array');
    } else {
      for (const type of JSON_TYPES) {
        out.add(type);
      }
    }
    if (out.has('number')) {
      out.add('integer');
    }
    return out;
  }

  /** The branch of a schema that describes an object, if it admits objects at all. */
  objectBranch(schema: unknown): Schema | undefined {
    const s = this.resolve(schema);
    const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (alternatives) {
      for (const alternative of alternatives) {
        const branch = this.objectBranch(alternative);
        if (branch) {
          return branch;
        }
      }
      return undefined;
    }
    return this.types(s).has('object') && (s.properties || s.type === 'object') ? s : undefined;
  }

  /** The branch of a schema that describes an array, if it admits arrays at all. */
  arrayBranch(schema: unknown): Schema | undefined {
    const s = this.resolve(schema);
    const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (alternatives) {
      return alternatives.map((a) => this.arrayBranch(a)).find((b) => b !== undefined);
    }
    return s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array'))
      ? s
      : undefined;
  }

  /**
   * A valid-looking value: required properties only, filled by type, format, enum, length and
   * (simple) pattern; arrays empty unless they must have items or hold objects (one item, so
   * nested fields exist to mutate); `hint` answers first where the test knows better.
   */
  sample(schema: unknown, name: string, hint: Hint): unknown {
    const s = this.resolve(schema);
    const hinted = hint(name, s);
    if (hinted !== undefined) {
      return hinted;
    }
    if ('const' in s) {
      return s.const;
    }
    if (Array.isArray(s.enum)) {
      return s.enum[0];
    }
    const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (alternatives) {
      const branch =
        alternatives.find((a) => !this.types(a).has('null') || this.types(a).size > 1) ??
        alternatives[0];
      return this.sample(branch, name, hint);
    }
    if (Array.isArray(s.allOf)) {
      const merged = (s.allOf as unknown[]).map((a) => this.resolve(a));
      return this.sample(
        {
          type: 'object',
          properties: Object.assign({}, ...merged.map((m) => m.properties ?? {})),
          required: merged.flatMap((m) => (m.required as string[] | undefined) ?? []),
        },
        name,
        hint,
      );
    }
    const types = [...this.types(s)].filter((t) => t !== 'null');
    const type = types[0] ?? 'null';
    switch (type) {
      case 'object': {
        const out: Record<string, unknown> = {};
        const properties = (s.properties ?? {}) as Record<string, Schema>;
        for (const key of (s.required as string[] | undefined) ?? []) {
          out[key] = this.sample(properties[key] ?? {}, key, hint);
        }
        return out;
      }
      case 'array': {
        const items = this.resolve(s.items);
        const wanted = Math.max(
          Number(s.minItems ?? 0),
          this.objectBranch(items)?.properties ? 1 : 0,
        );
        const count = Math.min(wanted, Number(s.maxItems ?? wanted));
        return Array.from({ length: count }, () => this.sample(items, name, hint));
      }
      case 'string':
        return sampleString(s, name);
      case 'integer':
      case 'number': {
        const minimum =
          typeof s.minimum === 'number'
            ? s.minimum
            : typeof s.exclusiveMinimum === 'number'
              ? s.exclusiveMinimum + 1
              : 1;
        const value = typeof s.maximum === 'number' ? Math.min(minimum, s.maximum) : minimum;
        return type === 'integer' ? Math.ceil(value) : value;
      }
      case 'boolean':
        return true;
      default:
        return null;
    }
  }

  /**
   * The root `if`/`then` variant of a body: the sampled body with the `if` condition made
   * true (its required properties set to their first enum/const value) and what `then`
   * requires filled; undefined when the root has no `if`/`then` this can satisfy.
   */
  conditionalSample(schema: unknown, hint: Hint): unknown {
    const object = this.objectBranch(schema);
    const condition = object?.if ? this.resolve(object.if) : undefined;
    const then = object?.then ? this.resolve(object.then) : undefined;
    if (!object || !condition || !then) {
      return undefined;
    }
    const body = { ...(this.sample(object, '', hint) as Record<string, unknown>) };
    const conditionProperties = (condition.properties ?? {}) as Record<string, Schema>;
    for (const key of (condition.required as string[] | undefined) ?? []) {
      const property = this.resolve(conditionProperties[key]);
      if ('const' in property) {
        body[key] = property.const;
      } else if (Array.isArray(property.enum) && property.enum.length > 0) {
        body[key] = property.enum[0];
      } else {
        return undefined;
      }
    }
    const thenProperties = (then.properties ?? {}) as Record<string, Schema>;
    for (const [key, property] of Object.entries(thenProperties)) {
      body[key] = this.sample(property, key, hint);
    }
    return body;
  }

  /** Every field of a body schema, nested objects and the first item of arrays included. */
  fieldPaths(schema: unknown): FieldPath[] {
    const out = new Map<string, FieldPath>();
    let variant: 0 | 1 = 0;
    const walk = (node: unknown, prefix: Array<string | number>, depth: number) => {
      const object = this.objectBranch(node);
      if (!object || depth > MAX_DEPTH) {
        return;
      }
      const required = new Set((object.required as string[] | undefined) ?? []);
      for (const [key, child] of Object.entries(
        (object.properties ?? {}) as Record<string, Schema>,
      )) {
        const path = [...prefix, key];
        const resolved = this.resolve(child);
        if (!out.has(JSON.stringify(path))) {
          out.set(JSON.stringify(path), {
            path,
            schema: resolved,
            required: required.has(key),
            variant,
          });
        }
        walk(resolved, path, depth + 1);
        const array = this.arrayBranch(resolved);
        if (array?.items) {
          walk(array.items, [...path, 0], depth + 1);
        }
      }
      const extra = object.additionalProperties;
      if (extra && typeof extra === 'object') {
        const path = [...prefix, 'hostile_extra'];
        out.set(JSON.stringify(path), {
          path,
          schema: this.resolve(extra),
          required: false,
          variant,
        });
      }
      // `if`/`then`: the fields `then` adds (e.g. a report's viewing payload) are fields too.
      if (object.then && depth === 0) {
        variant = 1;
        walk(object.then, prefix, depth);
        variant = 0;
      }
    };
    walk(schema, [], 0);
    return [...out.values()];
  }
}

function jsonTypeOf(value: unknown): JsonType {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'array';
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? 'integer' : 'number';
  }
  return typeof value as JsonType;
}

const PATTERN_CANDIDATES = ['x', 'hostile', 'x1', 'a.b', 'X', '1', 'x-1', 'did:ocss:hostile'];

function sampleString(s: Schema, name: string): string {
  const description = typeof s.description === 'string' ? s.description : '';
  let value: string;
  switch (s.format) {
    case 'date-time':
      value = '2026-01-15T12:00:00.000Z';
      break;
    case 'date':
      value = '2015-02-03';
      break;
    case 'email':
      value = 'hostile@example.com';
      break;
    case 'uri':
    case 'url':
      value = 'https://example.com/';
      break;
    case 'uuid':
      value = '00000000-0000-4000-8000-000000000000';
      break;
    default:
      if (/date/.test(name) || description.includes('YYYY-MM-DD')) {
        value = '2015-02-03';
      } else if (/(^|_)url$/.test(name)) {
        value = 'https://example.com/';
      } else if (typeof s.pattern === 'string') {
        const pattern = new RegExp(s.pattern, 'u');
        value = PATTERN_CANDIDATES.find((c) => pattern.test(c)) ?? 'x';
      } else {
        value = 'x';
      }
  }
  const minLength = Number(s.minLength ?? 0);
  if (value.length < minLength) {
    value = value.padEnd(minLength, 'x');
  }
  return value;
}

/** A deep copy of `body` with the value at `path` replaced (missing parents are created). */
export function withValue(body: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) {
    return value;
  }
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  const isIndex = typeof head === 'number';
  const base =
    isIndex && Array.isArray(body)
      ? [...body]
      : !isIndex && body && typeof body === 'object' && !Array.isArray(body)
        ? { ...(body as Record<string, unknown>) }
        : isIndex
          ? []
          : {};
  const container = base as Record<string | number, unknown>;
  container[head] = withValue(container[head], rest, value);
  return base;
}

/** A deep copy of `body` without the value at `path`. */
export function without(body: unknown, path: Array<string | number>): unknown {
  if (path.length === 0 || !body || typeof body !== 'object') {
    return body;
  }
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(body)) {
    const copy = [...body];
    if (typeof head === 'number' && head < copy.length) {
      copy[head] = rest.length === 0 ? undefined : without(copy[head], rest);
    }
    return copy;
  }
  const copy = { ...(body as Record<string, unknown>) };
  if (rest.length === 0) {
    delete copy[head];
  } else {
    copy[head] = without(copy[head], rest);
  }
  return copy;
}
