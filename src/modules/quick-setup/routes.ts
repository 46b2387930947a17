// Spec: "Quick setup" — POST /setup/quick.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';
import { PolicyStrictness, RuleOrigin } from '../policies/routes.js';
import { MaxRatingsSchema } from '../ratings/routes.js';
import type { QuickSetupService } from './service.js';

const QuickSetupBody = Type.Object({
  child_name: Name(),
  birth_date: Type.String({ maxLength: 32, description: 'YYYY-MM-DD' }),
  strictness: Type.Optional(Type.Enum(['relaxed', 'recommended', 'strict'])),
  family_id: Type.Optional(Uuid('reuse this family; also the idempotency key')),
  family_name: Type.Optional(Name("default: the child's name + “'s Family”")),
  test_clock_id: Type.Optional(
    Type.Union([Uuid(), Type.Null()], {
      description:
        'sandbox: the test clock a new family lives by (ignored with family_id: the family keeps its clock)',
    }),
  ),
});

const QuickSetupResult = Type.Object(
  {
    family: Type.Object({ id: Uuid(), name: Type.String() }),
    child: Type.Object({ id: Uuid(), name: Type.String(), birth_date: DateTime() }),
    policy: Type.Object({
      id: Uuid(),
      name: Type.String(),
      status: Type.String(),
      strictness: PolicyStrictness,
    }),
    rules: Type.Array(
      Type.Object({
        id: Uuid(),
        policy_id: Uuid(),
        category: Type.String(),
        enabled: Type.Boolean(),
        config: Type.Unsafe<Record<string, unknown>>({
          type: 'object',
          additionalProperties: true,
        }),
        origin: RuleOrigin,
        created_at: DateTime(),
        updated_at: DateTime(),
      }),
      { minItems: 20, maxItems: 20 },
    ),
    age_group: Type.String(),
    max_ratings: MaxRatingsSchema,
    rule_summary: Type.Object({
      screen_time_minutes: Type.Integer(),
      bedtime_hour: Type.Integer(),
      web_filter_level: Type.String(),
      content_rating: Type.String(),
      total_rules_enabled: Type.Integer(),
    }),
  },
  { $id: 'QuickSetupResult' },
);

export function quickSetupRoutes(
  service: QuickSetupService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    app.post(
      '/setup/quick',
      {
        config: { auth: surface.auth, scope: 'write:families', errors: [401, 403, 404, 422] },
        schema: {
          operationId: surface.operationId('quickSetup'),
          summary: 'A family, a child, an active policy and its 20 age rules, in one call',
          description:
            'Open in the sandbox. Repeating the call with the returned family_id, the same name and birth date returns the same child and policy (and repairs a half-made one).',
          tags: ['Quick setup'],
          security: surface.security,
          body: QuickSetupBody,
          response: { 201: QuickSetupResult },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await service.quickSetup(requirePrincipal(request), request.body)),
    );
  };
}
