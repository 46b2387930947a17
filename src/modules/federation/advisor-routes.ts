// Spec: "Advisors" rows and "AdvisorRegistration"; CONTRACT.md §9 "Advisors".
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionPrincipal, sessionUserId } from '../../auth/principal.js';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';
import { OrgParams } from '../orgs/schemas.js';
import type { AdvisorsService } from './advisors-service.js';

const TAGS = ['OCSS federation'];

const SelfRegistrationBody = Type.Object({
  did: Type.String({ maxLength: 200, description: 'did:ocss:<name>' }),
  public_key_b64url: Type.String({
    maxLength: 200,
    description: 'base64url of the 32-byte Ed25519 public key',
  }),
  roles: Type.Optional(
    Type.Array(Type.String({ maxLength: 32 }), {
      maxItems: 8,
      description: 'advisor, editor, reviewer, observer (default [advisor])',
    }),
  ),
});

/** The deprecated shim takes the same body; without `did` it answers 400 `did is required`. */
const ShimBody = Type.Object({
  did: Type.Optional(SelfRegistrationBody.properties.did),
  public_key_b64url: SelfRegistrationBody.properties.public_key_b64url,
  roles: SelfRegistrationBody.properties.roles,
});

const SelfRegistration = Type.Object(
  {
    did: Type.String(),
    key_id: Type.String({ description: 'use character for character as keyid when signing' }),
    tier: Type.Literal('provisional'),
    status: Type.Literal('active'),
    roles: Type.Array(Type.String()),
    registered_at: DateTime(),
  },
  { $id: 'AdvisorSelfRegistration' },
);

const OrgAdvisorBody = Type.Object({
  slug: Type.String({
    pattern: '^[a-z0-9._-]{1,64}$',
    'x-error-message': 'slug must be 1-64 characters of a-z 0-9 . _ -',
  }),
  display_name: Name(),
  public_key_pem: Type.String({ maxLength: 4096, description: 'Ed25519 SPKI PEM' }),
  key_id: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'the registrant’s name for its key; the published key_id is did#thumbprint',
  }),
  scope: Type.Enum(['family', 'global']),
  publisher_org: Type.Optional(Type.String({ maxLength: 255 })),
  callback_url: Type.Optional(Type.String({ maxLength: 2048 })),
  capability_domains: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 })),
  scope_family_id: Type.Optional(Type.Union([Uuid(), Type.Null()])),
  manifest_url: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
});

const OrgAdvisor = Type.Object(
  {
    id: Uuid(),
    org_id: Uuid(),
    slug: Type.String(),
    did: Type.String(),
    key_id: Type.String(),
    display_name: Type.String(),
    scope: Type.Enum(['family', 'global']),
    tier: Type.Enum(['provisional', 'verified']),
    status: Type.Enum(['active', 'suspended', 'revoked']),
    capability_domains: Type.Array(Type.String(), { description: 'the accepted set' }),
    scope_family_id: Type.Union([Uuid(), Type.Null()]),
    manifest_url: Type.Union([Type.String(), Type.Null()]),
    publisher_org: Type.Union([Type.String(), Type.Null()]),
    callback_url: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime(),
  },
  { $id: 'OrgAdvisor' },
);

export function advisorRoutes(advisors: AdvisorsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/advisors/self-register',
      {
        config: { auth: 'public', errors: [409] },
        schema: {
          operationId: 'selfRegisterAdvisor',
          summary: 'Put a DID and its Ed25519 key on the trust list (provisional, create-only)',
          tags: TAGS,
          body: SelfRegistrationBody,
          response: { 200: SelfRegistration },
        },
      },
      async (request) => advisors.selfRegister(request.body),
    );

    app.post(
      '/api/v1/advisors/register',
      {
        config: { auth: 'public', errors: [409] },
        schema: {
          operationId: 'registerAdvisor',
          summary: 'Deprecated: use POST /api/v1/advisors/self-register (same body and result)',
          tags: TAGS,
          deprecated: true,
          body: ShimBody,
          response: { 200: SelfRegistration },
        },
      },
      async (request) => advisors.selfRegister(request.body),
    );

    app.post(
      '/api/v1/developers/orgs/:orgId/advisors',
      {
        config: { auth: 'session', errors: [401, 403, 404, 409] },
        schema: {
          operationId: 'registerOrgAdvisor',
          summary: 'Register an advisor of the org (owner or admin); listed as did:ocss:<slug>',
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgParams,
          body: OrgAdvisorBody,
          response: { 201: OrgAdvisor },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await advisors.registerForOrg(
              sessionPrincipal(request),
              request.params.orgId,
              request.body,
            ),
          ),
    );

    app.get(
      '/api/v1/developers/orgs/:orgId/advisors',
      {
        config: { auth: 'session', errors: [401, 404] },
        schema: {
          operationId: 'listOrgAdvisors',
          summary: 'The org’s registered advisors, newest first',
          tags: TAGS,
          security: [{ session: [] }],
          params: OrgParams,
          response: { 200: Type.Array(OrgAdvisor) },
        },
      },
      async (request) => advisors.listForOrg(sessionUserId(request), request.params.orgId),
    );
  };
}
