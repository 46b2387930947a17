// Request and response shapes of the three /oauth/* routes (spec: "Reference OAuth-style
// connect flow"). Parameters a standard OAuth client adds are declared, so they are
// documented, and otherwise ignored: the flow is stateless and does not bind PKCE.
import { Type } from 'typebox';
import { SANDBOX_ACCOUNTS } from './profiles.js';
import { REDIRECT_URI_MESSAGE } from './redirect-uri.js';

const Ignored = (description: string, maxLength = 2048) =>
  Type.Optional(Type.String({ maxLength, description: `${description} (accepted, ignored)` }));

export const AuthorizeQuery = Type.Object({
  redirect_uri: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'Absolute http(s) URL the browser is sent back to',
    'x-error-message': REDIRECT_URI_MESSAGE,
  }),
  state: Type.Optional(
    Type.String({ maxLength: 1024, description: 'Returned unchanged with the response' }),
  ),
  decision: Type.Optional(
    Type.Enum(['approve', 'deny'], {
      description: 'Absent: the consent page. approve: a code. deny: error=access_denied.',
    }),
  ),
  account: Type.Optional(
    Type.Enum([...SANDBOX_ACCOUNTS], {
      description: "demo (default): the demo family's three children; no-children: none",
    }),
  ),
  response_type: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'code, if present; anything else redirects with unsupported_response_type',
    }),
  ),
  client_id: Ignored('The client', 255),
  scope: Ignored('Requested scope', 1024),
  code_challenge: Ignored('PKCE challenge', 128),
  code_challenge_method: Ignored('PKCE method', 16),
});

export const TokenRequestBody = Type.Object({
  grant_type: Type.String({ maxLength: 64, description: 'authorization_code' }),
  code: Type.Optional(Type.String({ maxLength: 2048, description: 'The `sbxauth_…` code' })),
  redirect_uri: Ignored('Redirect URI of the authorization request'),
  client_id: Ignored('The client', 255),
  client_secret: Ignored('The client secret', 1024),
  code_verifier: Ignored('PKCE verifier', 128),
});

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: 'Opaque, prefix `sbxtok_`' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds (3600)' }),
    scope: Type.String({ description: 'profiles' }),
  },
  { $id: 'SandboxTokenResponse' },
);

export const ChildProfileSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, description: "The provider's stable id of the profile" }),
    displayName: Type.String({ description: "The child's name" }),
    subject_ref: Type.String({
      format: 'uuid',
      description: 'The child id the policy and enforcement legs key on',
    }),
    kind: Type.Literal('child'),
  },
  { $id: 'ChildProfile' },
);
