// A tool's schemas, derived from its REST operation in the OpenAPI document: the input is
// the operation's path parameters (snake case: family_id, child_id…), query parameters and
// body fields by their REST names, plus `idempotency_key` on writes; the output is its
// success response (a list wrapped as {items}, as the tool result is). References are
// inlined and OpenAPI-only keywords dropped, so any JSON Schema validator reads them.

type Schema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** The /api/v1 path template, e.g. /api/v1/children/{childID}. */
  path: string;
  parameters: Parameter[];
  body: Schema | undefined;
  bodyRequired: boolean;
  success: { status: number; schema: Schema | undefined };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, Schema> };
}

/** `familyID`, `childId` → `family_id`, `child_id`. */
export function snakeCase(name: string): string {
  return name
    .replace(/ID$/, 'Id')
    .replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
    .replace(/^_/, '');
}

/** Inlines `#/components/schemas/…` references and drops keywords a validator would not know. */
function clean(schema: unknown, components: Record<string, Schema>, seen: string[] = []): unknown {
  if (Array.isArray(schema)) {
    return schema.map((item) => clean(item, components, seen));
  }
  if (typeof schema !== 'object' || schema === null) {
    return schema;
  }
  const ref = (schema as Schema).$ref;
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    if (seen.includes(name)) {
      return {}; // a cycle: anything (none exists today)
    }
    return clean(components[name] ?? {}, components, [...seen, name]);
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-') || key === 'example' || key === 'examples' || key === '$id') {
      continue;
    }
    // `properties` maps names to schemas: names are kept as they are.
    out[key] =
      key === 'properties' && typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.entries(value).map(([name, inner]) => [name, clean(inner, components, seen)]),
          )
        : clean(value, components, seen);
  }
  return out;
}

/** The body's object schema (an optional body is `anyOf: [object, null]`). */
function objectSchema(schema: Schema | undefined): Schema | undefined {
  if (!schema) {
    return undefined;
  }
  if (schema.type === 'object') {
    return schema;
  }
  const options = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return options?.find((option) => option.type === 'object');
}

export function findOperation(doc: OpenApiDocument, operationId: string): Operation {
  const components = doc.components?.schemas ?? {};
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.operationId !== operationId) {
        continue;
      }
      const content = (op.requestBody as { content?: Record<string, { schema?: Schema }> })
        ?.content?.['application/json'];
      const responses = op.responses as Record<
        string,
        { content?: Record<string, { schema?: Schema }> }
      >;
      const status = Object.keys(responses).find((code) => code.startsWith('2')) ?? '200';
      const responseSchema = responses[status]?.content?.['application/json']?.schema;
      return {
        method: method.toUpperCase(),
        path,
        parameters: ((op.parameters as Parameter[] | undefined) ?? []).map((parameter) => ({
          ...parameter,
          schema: clean(parameter.schema, components) as Schema,
        })),
        body: objectSchema(clean(content?.schema, components) as Schema | undefined),
        bodyRequired: Boolean((op.requestBody as { required?: boolean })?.required),
        success: {
          status: Number(status),
          schema: clean(responseSchema, components) as Schema | undefined,
        },
      };
    }
  }
  throw new Error(`no operation ${operationId} in the OpenAPI document`);
}

const IDEMPOTENCY_KEY: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'optional: a retry with the same key and the same arguments is answered from the first call',
};

export function inputSchemaOf(operation: Operation, defaults: ReadonlySet<string>): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const parameter of operation.parameters) {
    if (parameter.in === 'header') {
      continue;
    }
    const name = parameter.in === 'path' ? snakeCase(parameter.name) : parameter.name;
    properties[name] = {
      ...parameter.schema,
      ...(parameter.description ? { description: parameter.description } : {}),
    };
    if (parameter.required && !defaults.has(name)) {
      required.push(name);
    }
  }
  const body = operation.body;
  for (const [name, schema] of Object.entries((body?.properties as Record<string, Schema>) ?? {})) {
    properties[name] = schema;
  }
  for (const name of (body?.required as string[] | undefined) ?? []) {
    if (!defaults.has(name)) {
      required.push(name);
    }
  }
  if (operation.method !== 'GET') {
    properties.idempotency_key = IDEMPOTENCY_KEY;
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** Tool results are objects: a list is `{items}`, an empty answer (204) is `{}`. */
export function outputSchemaOf(operation: Operation): Schema {
  const schema = operation.success.schema;
  if (!schema || operation.success.status === 204) {
    return { type: 'object', properties: {}, additionalProperties: false };
  }
  if (schema.type === 'array') {
    return { type: 'object', properties: { items: schema }, required: ['items'] };
  }
  return schema;
}
