// CONTRACT.md §7: policies and their rules (rows /children/{id}/policies, /policies/**).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';
import type { PoliciesService } from './service.js';

const TAGS = ['Policies'];

/** Checked against the category's schema by the service; any object passes here. */
const RuleConfig = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'per the category schema (GET /rules/categories)',
});

const StrictnessEnum = Type.Enum(['relaxed', 'recommended', 'strict']);

/** The policy's strictness (CONTRACT.md §11.1), shown on every Policy. */
export const PolicyStrictness = Type.Union([StrictnessEnum, Type.Null()], {
  description:
    'the strictness its rules were last generated from age with (quick setup, generate-from-age); null until first generated',
});

/** Who wrote a rule (CONTRACT.md §11.1), shown on every Rule. */
export const RuleOrigin = Type.Enum(['age', 'custom'], {
  description:
    '`age`: written by generation from the child’s age (quick setup, generate-from-age), and kept following the age; `custom`: written by a person or a key',
});

export const Policy = Type.Object(
  {
    id: Uuid(),
    child_id: Uuid(),
    name: Type.String(),
    status: Type.Enum(['draft', 'active', 'paused']),
    priority: Type.Integer(),
    version: Type.Integer({
      description: 'rises by one on every change of the policy or its rules',
    }),
    strictness: PolicyStrictness,
    paused_reason: Type.Union([Type.Literal('came_of_age'), Type.Null()], {
      description:
        'why Haven paused the policy (`came_of_age`: the child turned 18); null when a person paused it or it is not paused',
    }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Policy' },
);

export const Rule = Type.Object(
  {
    id: Uuid(),
    policy_id: Uuid(),
    category: Type.String(),
    enabled: Type.Boolean(),
    config: RuleConfig,
    origin: RuleOrigin,
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'PolicyRule' },
);

const Priority = Type.Integer({ minimum: -1000, maximum: 1000 });
const Category = Type.String({ minLength: 1, maxLength: 64 });
const RuleBody = Type.Object({ enabled: Type.Boolean(), config: RuleConfig });

const ChildParams = Type.Object({ childID: Uuid() });
const PolicyParams = Type.Object({ policyID: Uuid() });
const RuleParams = Type.Object({ policyID: Uuid(), category: Category });

export function policyRoutes(policies: PoliciesService): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:policies' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:policies' as const };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/children/:childID/policies',
      {
        config: write,
        schema: {
          ...route('createPolicy', 'Create a draft policy for a child'),
          params: ChildParams,
          body: Type.Object({ name: Name(), priority: Type.Optional(Priority) }),
          response: { 201: Policy },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await policies.createPolicy(
              requirePrincipal(request),
              request.params.childID,
              request.body,
            ),
          ),
    );

    app.get(
      '/children/:childID/policies',
      {
        config: read,
        schema: {
          ...route('listPolicies', 'A child’s policies, newest first'),
          params: ChildParams,
          response: { 200: Type.Array(Policy) },
        },
      },
      async (request) => policies.listPolicies(requirePrincipal(request), request.params.childID),
    );

    app.get(
      '/policies/:policyID',
      {
        config: read,
        schema: {
          ...route('getPolicy', 'One policy'),
          params: PolicyParams,
          response: { 200: Policy },
        },
      },
      async (request) => policies.getPolicy(requirePrincipal(request), request.params.policyID),
    );

    app.patch(
      '/policies/:policyID',
      {
        config: write,
        schema: {
          ...route('updatePolicy', 'Rename or reprioritise a policy'),
          params: PolicyParams,
          body: Type.Object({ name: Type.Optional(Name()), priority: Type.Optional(Priority) }),
          response: { 200: Policy },
        },
      },
      async (request) =>
        policies.updatePolicy(requirePrincipal(request), request.params.policyID, request.body),
    );

    app.delete(
      '/policies/:policyID',
      {
        config: write,
        schema: {
          ...route('deletePolicy', 'Delete a policy and its rules'),
          params: PolicyParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await policies.deletePolicy(requirePrincipal(request), request.params.policyID);
        return reply.code(204).send(null);
      },
    );

    for (const [action, status] of [
      ['activate', 'active'],
      ['pause', 'paused'],
    ] as const) {
      app.post(
        `/policies/:policyID/${action}`,
        {
          config: write,
          schema: {
            ...route(`${action}Policy`, `Set the policy ${status}`),
            params: PolicyParams,
            response: { 200: Policy },
          },
        },
        async (request) =>
          policies.setStatus(requirePrincipal(request), request.params.policyID, status),
      );
    }

    app.post(
      '/policies/:policyID/generate-from-age',
      {
        config: write,
        schema: {
          ...route('generatePolicyRulesFromAge', 'Write the 20 age-appropriate rules (one change)'),
          params: PolicyParams,
          body: Type.Union([
            Type.Object({ strictness: Type.Optional(StrictnessEnum) }),
            Type.Null(),
          ]),
          response: { 200: Type.Array(Rule) },
        },
      },
      async (request) =>
        policies.generateFromAge(
          requirePrincipal(request),
          request.params.policyID,
          request.body?.strictness,
        ),
    );

    app.get(
      '/policies/:policyID/rules',
      {
        config: read,
        schema: {
          ...route('listPolicyRules', 'The rules of a policy'),
          params: PolicyParams,
          response: { 200: Type.Array(Rule) },
        },
      },
      async (request) => policies.listRules(requirePrincipal(request), request.params.policyID),
    );

    app.put(
      '/policies/:policyID/rules/:category',
      {
        config: write,
        schema: {
          ...route(
            'putPolicyRule',
            'Create or replace one rule (its config checked against the registry)',
          ),
          params: RuleParams,
          body: RuleBody,
          response: { 200: Rule },
        },
      },
      async (request) => {
        const { policyID, category } = request.params;
        return policies.putRule(requirePrincipal(request), policyID, { category, ...request.body });
      },
    );

    app.put(
      '/policies/:policyID/rules',
      {
        config: write,
        schema: {
          ...route('putPolicyRules', 'Create or replace many rules, all or nothing (one change)'),
          params: PolicyParams,
          body: Type.Object({
            rules: Type.Array(
              Type.Object({ category: Category, enabled: Type.Boolean(), config: RuleConfig }),
              {
                maxItems: 123,
              },
            ),
          }),
          response: { 200: Type.Array(Rule) },
        },
      },
      async (request) =>
        policies.putRules(requirePrincipal(request), request.params.policyID, request.body.rules),
    );

    app.delete(
      '/policies/:policyID/rules/:category',
      {
        config: write,
        schema: {
          ...route('deletePolicyRule', 'Remove one rule'),
          params: RuleParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        const { policyID, category } = request.params;
        await policies.deleteRule(requirePrincipal(request), policyID, category);
        return reply.code(204).send(null);
      },
    );
  };
}
