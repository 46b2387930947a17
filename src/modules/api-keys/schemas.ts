// Shapes of developer API keys (spec: DeveloperApiKey, DeveloperApiKeyWithSecret).
import { Type } from 'typebox';
import { SCOPES } from '../../auth/scopes.js';
import { DateTime, Name, NullableDateTime, Uuid } from '../../http/common-schemas.js';

const apiKeyFields = {
  id: Uuid(),
  org_id: Uuid(),
  created_by: Uuid(),
  name: Type.String(),
  key_prefix: Type.String({ description: 'non-secret: the prefix and 8 characters after it' }),
  environment: Type.Enum(['test', 'live']),
  scopes: Type.Array(Type.String(), { description: 'empty means unscoped (every scope)' }),
  last_used_at: NullableDateTime(),
  last_used_ip: Type.Union([Type.String(), Type.Null()], { description: 'null if never used' }),
  expires_at: NullableDateTime('null: never expires'),
  revoked_at: NullableDateTime('null while active'),
  created_at: DateTime(),
};

export const DeveloperApiKey = Type.Object(apiKeyFields, { $id: 'DeveloperApiKey' });

export const DeveloperApiKeyWithSecret = Type.Object(
  {
    ...apiKeyFields,
    key: Type.String({ description: 'the secret: returned exactly once, never retrievable' }),
  },
  { $id: 'DeveloperApiKeyWithSecret' },
);

export const CreateApiKeyBody = Type.Object({
  name: Name(),
  environment: Type.String({
    enum: ['test', 'live'],
    'x-error-message': "environment must be 'live' or 'test'",
  }),
  scopes: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 64,
      description: `any of: ${SCOPES.join(', ')}; empty or absent = every scope`,
    }),
  ),
  expires_at: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 })),
});

export const KeyParams = Type.Object({ orgId: Uuid(), keyId: Uuid() });
