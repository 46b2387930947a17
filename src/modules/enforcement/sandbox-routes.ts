// Sandbox failure simulation (our addition to CONTRACT.md §8, Plaid-style): POST and DELETE
// /sandbox/platforms/{platformID}/fail. Registered on sandbox deployments only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import {
  ArmedFailure,
  ArmFailureBody,
  ClearFailureQuery,
  SandboxPlatformParams,
} from './schemas.js';
import type { SandboxFailures } from './service.js';

const TAGS = ['Sandbox'];

export function sandboxFailureRoutes(
  failures: SandboxFailures,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const config = {
      auth: surface.auth,
      scope: 'write:enforcement' as const,
      errors: [401, 403, 404],
    };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/sandbox/platforms/:platformID/fail',
      {
        config,
        schema: {
          ...route('armSandboxPlatformFailure', 'Make enforcement on a platform fail (sandbox)'),
          description:
            "The family's next enforcement runs on this platform report `failed` with " +
            'error_message "simulated failure (sandbox): <message>": `times` runs, or every run ' +
            'until cleared. Arming again replaces the previous setting.',
          params: SandboxPlatformParams,
          body: ArmFailureBody,
          response: { 201: ArmedFailure },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await failures.arm(requirePrincipal(request), request.params.platformID, request.body),
          ),
    );

    app.delete(
      '/sandbox/platforms/:platformID/fail',
      {
        config,
        schema: {
          ...route('clearSandboxPlatformFailure', 'Stop simulating failures on a platform'),
          params: SandboxPlatformParams,
          querystring: ClearFailureQuery,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await failures.clear(
          requirePrincipal(request),
          request.params.platformID,
          request.query.family_id,
        );
        return reply.code(204).send(null);
      },
    );
  };
}
