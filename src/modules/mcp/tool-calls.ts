// Running a tool: its REST operation, called through the service's own routes (app.inject)
// as the token, so validation, the family binding, scopes, idempotency, events and usage
// are the REST ones. The request stays inside this process: the token goes to no other
// service (MCP forbids token passthrough).
import type { FastifyInstance } from 'fastify';
import { internalCallHeaders } from '../../http/internal-calls.js';
import { type Operation, snakeCase } from './tool-schemas.js';

export interface ToolCaller {
  token: string;
  familyId: string;
  requestId: string;
}

export interface RestAnswer {
  status: number;
  body: unknown;
}

export interface CallToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Arguments a tool takes that default to the token's family when absent. */
export const FAMILY_DEFAULTS = new Set(['family_id']);

function bad(message: string): CallToolResult {
  return { content: [{ type: 'text', text: `400 ${message}` }], isError: true };
}

export async function callRest(
  app: FastifyInstance,
  caller: ToolCaller,
  request: { method: string; url: string; body?: unknown; idempotencyKey?: string },
): Promise<RestAnswer> {
  const res = await app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: {
      authorization: `Bearer ${caller.token}`,
      'x-request-id': caller.requestId,
      ...internalCallHeaders(),
      ...(request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {}),
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
  });
  let body: unknown;
  try {
    body = res.body === '' ? undefined : JSON.parse(res.body);
  } catch {
    body = res.body;
  }
  return { status: res.statusCode, body };
}

/** A REST answer as a tool result (CONTRACT.md §10.1). */
export function toolResult(answer: RestAnswer): CallToolResult {
  if (answer.status >= 400) {
    const message =
      typeof answer.body === 'object' && answer.body !== null && 'message' in answer.body
        ? String((answer.body as { message: unknown }).message)
        : String(answer.body ?? '');
    return { content: [{ type: 'text', text: `${answer.status} ${message}` }], isError: true };
  }
  const structured = Array.isArray(answer.body)
    ? { items: answer.body }
    : ((answer.body ?? {}) as Record<string, unknown>);
  return {
    content: [
      { type: 'text', text: answer.body === undefined ? '{}' : JSON.stringify(answer.body) },
    ],
    structuredContent: structured,
  };
}

export async function runTool(
  app: FastifyInstance,
  caller: ToolCaller,
  operation: Operation,
  input: Record<string, unknown>,
): Promise<CallToolResult> {
  const args: Record<string, unknown> = { ...input };
  if (args.family_id === undefined) {
    args.family_id = caller.familyId;
  }
  const idempotencyKey = args.idempotency_key;
  delete args.idempotency_key;
  if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string') {
    return bad('idempotency_key must be a string');
  }

  let path = operation.path;
  const query = new URLSearchParams();
  for (const parameter of operation.parameters) {
    const name = parameter.in === 'path' ? snakeCase(parameter.name) : parameter.name;
    const value = args[name];
    delete args[name];
    if (parameter.in === 'path') {
      if (typeof value !== 'string' || value === '') {
        return bad(`${name} is required`);
      }
      path = path.replace(`{${parameter.name}}`, encodeURIComponent(value));
    } else if (parameter.in === 'query' && value !== undefined) {
      query.set(name, String(value));
    }
  }
  const bodyFields = Object.keys((operation.body?.properties as object | undefined) ?? {});
  let body: Record<string, unknown> | undefined;
  if (operation.body) {
    body = {};
    for (const [name, value] of Object.entries(args)) {
      // family_id is a body field of some operations (quick setup) and a default of all.
      if (bodyFields.includes(name) || name !== 'family_id') {
        body[name] = value;
      }
    }
  } else {
    const unknown = Object.keys(args).filter((name) => name !== 'family_id');
    if (unknown.length > 0) {
      return bad(`unknown argument: ${unknown[0]}`);
    }
  }
  const search = query.toString();
  return toolResult(
    await callRest(app, caller, {
      method: operation.method,
      url: `${path}${search ? `?${search}` : ''}`,
      body,
      idempotencyKey: idempotencyKey as string | undefined,
    }),
  );
}
