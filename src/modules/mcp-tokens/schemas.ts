// Shapes of MCP tokens (spec: McpToken, CreatedMcpToken).
import { Type } from 'typebox';
import { DateTime, Name, NullableDateTime, Uuid } from '../../http/common-schemas.js';

export const McpToken = Type.Object(
  {
    id: Uuid(),
    user_id: Uuid(),
    family_id: Uuid(),
    label: Type.String(),
    token_prefix: Type.String({ description: 'non-secret: `svcmcp_` and 8 characters' }),
    last_used_at: NullableDateTime(),
    created_at: DateTime(),
    revoked_at: NullableDateTime('null while active'),
  },
  { $id: 'McpToken' },
);

export const CreatedMcpToken = Type.Object(
  {
    token: McpToken,
    plain: Type.String({ description: 'the raw token (`svcmcp_…`): shown once, never stored' }),
  },
  { $id: 'CreatedMcpToken' },
);

export const CreateMcpTokenBody = Type.Object({ family_id: Uuid(), label: Name() });
export const McpTokenParams = Type.Object({
  id: Type.String({ format: 'uuid', 'x-error-message': 'invalid MCP token ID' }),
});
