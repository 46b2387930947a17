// POST /mcp (CONTRACT.md §10.1): the Model Context Protocol over Streamable HTTP, stateless,
// JSON answers, opened by an MCP token only. GET and DELETE /mcp are 405 (no SSE stream, no
// session to end).
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import secureJson from 'secure-json-parse';
import { readCredential } from '../../auth/credentials.js';
import { requirePrincipal } from '../../auth/principal.js';
import { sendFailure } from '../../http/error-handler.js';
import { ForbiddenError } from '../../http/errors.js';
import { BODY_LIMIT_BYTES } from '../../http/json-body.js';
import { MCP_PATH } from '../../http/route-classes.js';
import { buildTools, createMcpServer } from './mcp-server.js';
import type { OpenApiDocument } from './tool-schemas.js';

/** What a body that is not JSON parses to: answered with JSON-RPC's parse error. */
const NOT_JSON = Symbol('not JSON');

const WWW_AUTHENTICATE = 'Bearer realm="haven-mcp"';

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ jsonrpc: '2.0', id: null, error: { code, message } });
}

export function mcpRoutes(options: {
  /** The whole service: tools run through its routes. */
  root: FastifyInstance;
  /** Read per request: a server started on PORT=0 learns its URL after listening. */
  publicBaseUrl(): string;
}) {
  const { root } = options;

  return async (app: FastifyInstance) => {
    let tools: ReturnType<typeof buildTools> | undefined;

    // JSON-RPC bodies: a body that is not JSON is JSON-RPC's parse error, not the house 400.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
      (_request, body, done) => {
        try {
          done(
            null,
            secureJson.parse(body as Buffer, undefined, {
              protoAction: 'remove',
              constructorAction: 'remove',
            }),
          );
        } catch {
          done(null, NOT_JSON);
        }
      },
    );

    app.post(
      MCP_PATH,
      {
        config: { auth: 'mcp', errors: [401, 403, 429] },
        schema: {
          operationId: 'mcp',
          summary: 'Model Context Protocol (Streamable HTTP, stateless, JSON answers)',
          description:
            'JSON-RPC 2.0 messages of the Model Context Protocol: initialize, tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get. Send `Accept: application/json, text/event-stream`. Opened by an MCP token (`svcmcp_…`) only; every tool acts on the token’s family. See README “Use Haven from an AI assistant”.',
          tags: ['MCP'],
          security: [{ mcpToken: [] }],
        },
        onSend: (_request, reply, payload, done) => {
          if (reply.statusCode === 401) {
            reply.header('www-authenticate', WWW_AUTHENTICATE);
          }
          done(null, payload);
        },
      },
      async (request, reply) => {
        const origin = request.headers.origin;
        // DNS-rebinding protection: a browser page of another origin may not drive the tools.
        if (origin !== undefined && origin !== new URL(options.publicBaseUrl()).origin) {
          throw new ForbiddenError(`origin not allowed: ${origin}`);
        }
        if (request.body === NOT_JSON) {
          return jsonRpcError(reply, 400, -32700, 'Parse error: the body is not JSON');
        }
        if (Array.isArray(request.body) && request.body.length === 0) {
          return jsonRpcError(reply, 400, -32600, 'Invalid Request: an empty batch');
        }
        const principal = requirePrincipal(request);
        const credential = readCredential(request.headers);
        if (principal.kind !== 'mcp' || credential.kind !== 'mcpToken') {
          throw new Error('/mcp resolved a principal that is not an MCP token');
        }
        tools ??= buildTools(root.swagger() as unknown as OpenApiDocument);
        const server = createMcpServer(root, tools, {
          token: credential.secret,
          familyId: principal.familyId,
          requestId: request.id,
        });
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        await server.connect(transport);
        // The transport writes the answer itself: the headers set so far (request id, rate
        // limits) go with it, and Fastify's hooks still see the response finish.
        for (const [name, value] of Object.entries(reply.getHeaders())) {
          if (value !== undefined) {
            reply.raw.setHeader(name, value as string);
          }
        }
        reply.hijack();
        reply.raw.on('close', () => {
          void transport.close();
          void server.close();
        });
        await transport.handleRequest(request.raw, reply.raw, request.body);
      },
    );

    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url: MCP_PATH,
        config: { errors: [405] },
        schema: {
          operationId: method === 'GET' ? 'mcpGetNotSupported' : 'mcpDeleteNotSupported',
          summary: `Not supported: 405 with Allow: POST (${method === 'GET' ? 'no SSE stream' : 'no session to end'}; the server is stateless)`,
          tags: ['MCP'],
        },
        handler: (_request, reply) =>
          sendFailure(reply.header('allow', 'POST'), {
            status: 405,
            message: `${method} is not supported on /mcp: send JSON-RPC messages with POST (no SSE stream, no session)`,
          }),
      });
    }
  };
}
