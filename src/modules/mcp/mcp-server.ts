// The MCP server behind POST /mcp: tools (tools.ts), resources a model reads rather than
// calls, and two prompts a parent would use. Stateless: one Server per HTTP request, bound
// to the token that made it.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { callRest, FAMILY_DEFAULTS, runTool, type ToolCaller } from './tool-calls.js';
import {
  findOperation,
  inputSchemaOf,
  type OpenApiDocument,
  type Operation,
  outputSchemaOf,
} from './tool-schemas.js';
import { TOOLS } from './tools.js';

export const SERVER_INFO = { name: 'haven', title: 'Haven', version: '1.0.0' };

interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  operation: Operation;
}

/** The tool list, derived from the OpenAPI document once (it does not change at run time). */
export function buildTools(doc: OpenApiDocument): Tool[] {
  return TOOLS.map((row) => {
    const operation = findOperation(doc, row.operationId);
    return {
      name: row.name,
      title: row.title,
      description: row.description,
      inputSchema: inputSchemaOf(operation, FAMILY_DEFAULTS),
      outputSchema: outputSchemaOf(operation),
      annotations: {
        readOnlyHint: operation.method === 'GET',
        destructiveHint: operation.method === 'DELETE',
        // A repeat changes nothing more: reads, PUT (replaces), DELETE (gone is gone).
        idempotentHint: ['GET', 'PUT', 'DELETE'].includes(operation.method),
      },
      operation,
    };
  });
}

const RESOURCES = [
  {
    uri: 'haven://family',
    name: 'family',
    title: 'The family',
    description: "The token's family: the family, its children and its platform connections.",
    mimeType: 'application/json',
  },
  {
    uri: 'haven://rule-categories',
    name: 'rule-categories',
    title: 'Rule categories',
    description: 'The 123 rule categories, each with its config_schema and default_config.',
    mimeType: 'application/json',
  },
  {
    uri: 'haven://ratings/systems',
    name: 'rating-systems',
    title: 'Rating systems',
    description: 'The five content rating systems and their ratings, youngest first.',
    mimeType: 'application/json',
  },
];

const PROMPTS = [
  {
    name: 'protect_new_child',
    title: 'Set up protection for a new child',
    description:
      'Adds a child with age-appropriate rules and pushes them to the family’s platforms.',
    arguments: [
      { name: 'child_name', description: "The child's first name", required: true },
      { name: 'birth_date', description: 'YYYY-MM-DD', required: true },
    ],
  },
  {
    name: 'explain_policy',
    title: "Explain what my child's policy blocks",
    description: "Reads a child's active policy and explains its rules in plain language.",
    arguments: [
      { name: 'child_id', description: 'The child (from list_children)', required: true },
    ],
  },
];

function promptText(name: string, args: Record<string, string>): string {
  if (name === 'protect_new_child') {
    return [
      `Set up protection for my child ${args.child_name}, born ${args.birth_date}.`,
      'Use quick_setup_child to add them with the rules for their age, then list_connections',
      'to see which platforms the family has connected and enforce_policy to push the rules',
      'there; poll get_enforcement_job until it finishes and tell me, per platform, what was',
      'applied and what could not be. Before changing any rule, tell me what you will change.',
    ].join(' ');
  }
  return [
    `Explain in plain language what the active policy of child ${args.child_id} blocks and allows.`,
    'Use list_policies to find the active policy and list_rules to read its rules (read the',
    'haven://rule-categories resource for what each category means). Group the rules by',
    'topic (content, time, purchases, social, web, privacy), mention ratings limits and time',
    'windows exactly, and say which platforms enforce them (list_connections). Change nothing.',
  ].join(' ');
}

export function createMcpServer(app: FastifyInstance, tools: Tool[], caller: ToolCaller): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions:
      "Haven protects children online. This server is bound to one family: every tool acts as the token's user on that family only. Read haven://family first.",
  });
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ operation: _, ...tool }) => tool),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    }
    return runTool(app, caller, tool.operation, request.params.arguments ?? {});
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const get = async (url: string) => {
      const answer = await callRest(app, caller, { method: 'GET', url });
      if (answer.status >= 400) {
        throw new McpError(ErrorCode.InternalError, `${answer.status} reading ${uri}`);
      }
      return answer.body;
    };
    let value: unknown;
    switch (uri) {
      case 'haven://family': {
        const family = `/api/v1/families/${caller.familyId}`;
        value = {
          family: await get(family),
          children: await get(`${family}/children`),
          connections: await get(`${family}/connections`),
        };
        break;
      }
      case 'haven://rule-categories':
        value = await get('/api/v1/rules/categories');
        break;
      case 'haven://ratings/systems':
        value = await get('/api/v1/ratings/systems');
        break;
      default:
        throw new McpError(ErrorCode.InvalidParams, `unknown resource: ${uri}`);
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const prompt = PROMPTS.find((candidate) => candidate.name === request.params.name);
    if (!prompt) {
      throw new McpError(ErrorCode.InvalidParams, `unknown prompt: ${request.params.name}`);
    }
    const args = request.params.arguments ?? {};
    for (const argument of prompt.arguments) {
      if (argument.required && !args[argument.name]) {
        throw new McpError(ErrorCode.InvalidParams, `missing argument: ${argument.name}`);
      }
    }
    return {
      description: prompt.description,
      messages: [
        {
          role: 'user' as const,
          content: { type: 'text' as const, text: promptText(prompt.name, args) },
        },
      ],
    };
  });
  return server;
}
