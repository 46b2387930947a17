// The OpenAPI 3.1 document at /openapi.json and the browsable reference at /docs. Every
// route is described from its own schema; the error responses it can produce are merged in
// here from one shared map, so no route lists them by hand.
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Config } from '../config.js';
import { applyDeprecation } from './deprecation.js';
import { reasonPhrase } from './errors.js';
import { isApiPath, isMeteredPath, isMutatingMethod } from './route-classes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error statuses this route produces beyond the ones every route of its kind can. */
    errors?: number[];
  }
}

export const ERROR_ENVELOPE_ID = 'ErrorEnvelope';

export const errorEnvelopeSchema = {
  $id: ERROR_ENVELOPE_ID,
  type: 'object',
  description: 'The house error envelope. Branch on `code` (and `class` where present).',
  required: ['error', 'message', 'code'],
  properties: {
    error: { type: 'string', description: 'HTTP reason phrase', examples: ['Bad Request'] },
    message: {
      type: 'string',
      description: 'Human-readable reason',
      examples: ['name is required'],
    },
    code: { type: 'integer', description: 'HTTP status code', examples: [400] },
    class: { type: 'string', description: 'OCSS failure class (OCSS routes only)' },
    failed_step: { type: 'string', description: 'Set only when class is standing_failure' },
  },
  additionalProperties: true,
} as const;

type Schema = Record<string, unknown> & { response?: Record<string, unknown> };

/** The statuses a route can answer with, from what it accepts and where it lives. */
export function errorStatusesFor(route: RouteOptions, schema: Schema): number[] {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const statuses = new Set<number>(route.config?.errors ?? []);
  if (schema.body || schema.params || schema.querystring) {
    statuses.add(400);
  }
  if (schema.body) {
    statuses.add(413).add(415);
  }
  if (isApiPath(route.url) && methods.some(isMutatingMethod)) {
    // Idempotency-Key: malformed (400), or reused with another body / still in flight (409).
    statuses.add(400).add(409);
  }
  if (isMeteredPath(route.url)) {
    statuses.add(429);
  }
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

function isDocumented(route: RouteOptions): boolean {
  const schema = route.schema as Schema | undefined;
  return route.method !== 'HEAD' && schema?.hide !== true;
}

/** onRoute step: every documented route must say what it is and what can go wrong. */
export function describeRoute(route: RouteOptions): void {
  applyDeprecation(route);
  if (!isDocumented(route)) {
    return;
  }
  const schema = (route.schema ?? {}) as Schema;
  for (const field of ['operationId', 'summary', 'tags']) {
    if (schema[field] === undefined) {
      throw new Error(`route ${route.method} ${route.url} has no ${field} in its schema`);
    }
  }
  const response: Record<string, unknown> = { ...schema.response };
  for (const status of errorStatusesFor(route, schema)) {
    response[status] ??= { description: reasonPhrase(status), $ref: `${ERROR_ENVELOPE_ID}#` };
  }
  route.schema = { ...schema, response } as RouteOptions['schema'];
}

export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  app.addSchema(errorEnvelopeSchema);
  app.addHook('onRoute', describeRoute);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Haven API',
        version: '1.0.0',
        description:
          'Child-safety developer, provider and sandbox API. Errors use the house envelope ' +
          '`{error, message, code}`; every response carries `X-Request-Id`.',
      },
      servers: [{ url: config.publicBaseUrl }],
      tags: [{ name: 'Meta', description: 'Health and the API document' }],
      components: {
        securitySchemes: {
          session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'http', scheme: 'bearer', description: '`svc_test_…` or `svc_live_…`' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          mcpToken: { type: 'http', scheme: 'bearer', description: '`svcmcp_…`' },
          deviceKey: { type: 'apiKey', in: 'header', name: 'X-Device-Key' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN' },
        },
      },
    },
    refResolver: {
      // Shared schemas keep their own names in components.schemas.
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });

  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'The OpenAPI 3.1 document of every route',
        tags: ['Meta'],
        response: { 200: { type: 'object', additionalProperties: true } },
      },
    },
    async () => app.swagger(),
  );

  await app.register(scalar, {
    routePrefix: '/docs',
    // The page stands alone: its script comes from this process, and every feature that
    // calls Scalar's hosted services is off (a browser test fails on any request to another
    // origin): the AI agent, the developer toolbar (SDK generation, sharing to Scalar's
    // registry), the button that opens the hosted client, telemetry and web fonts. The
    // in-page "Test Request" client stays: it calls this API, same origin.
    configuration: {
      title: 'Haven API reference',
      url: '/openapi.json',
      withDefaultFonts: false,
      agent: { disabled: true },
      showDeveloperTools: 'never',
      hideClientButton: true,
      telemetry: false,
    },
  });
}
