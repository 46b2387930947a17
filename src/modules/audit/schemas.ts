// The audit log's shapes (CONTRACT.md §12.1).
import { Type } from 'typebox';
import { Uuid } from '../../http/common-schemas.js';

const Hash = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });

export const AuditEntrySchema = Type.Object(
  {
    id: Uuid(),
    seq: Type.Integer({ minimum: 1, description: 'position in the chain, from 1, without gaps' }),
    occurred_at: Type.String({
      format: 'date-time',
      description: "when the change committed, on the family's clock",
    }),
    family_id: Type.Union([Uuid(), Type.Null()]),
    org_id: Type.Union([Uuid(), Type.Null()]),
    actor: Type.Object({
      type: Type.Enum(['user', 'api_key', 'mcp_token', 'device', 'system']),
      id: Type.String(),
      label: Type.String({
        description:
          "a key's, token's or device key's prefix, a person's role, or the system act: never a personal value",
      }),
    }),
    action: Type.String({ description: '`<resource>.<verb>`, e.g. `policy.rule_updated`' }),
    target: Type.Object({ type: Type.String(), id: Type.String() }),
    request_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'the `x-request-id` of the request that made the change (null for Haven’s own acts)',
    }),
    changes: Type.Record(Type.String(), Type.Unknown(), {
      description: 'each field set: a setting with its new value, personal data as "[redacted]"',
    }),
    prev_hash: Hash('the previous entry’s `hash` (64 zeros for the first)'),
    hash: Hash('SHA-256 (lowercase hex) of the RFC 8785 JCS form of the entry without `hash`'),
  },
  { $id: 'AuditEntry' },
);

export const AuditPageSchema = Type.Object(
  {
    entries: Type.Array(AuditEntrySchema),
    next_before: Type.Union([Uuid(), Type.Null()], {
      description: 'pass as `before` for the next (older) page; null on the last page',
    }),
  },
  { $id: 'AuditLogPage' },
);

export const AuditHeadSchema = Type.Object(
  {
    family_id: Uuid(),
    entries: Type.Integer({ minimum: 0, description: 'the `seq` of the newest entry (0: none)' }),
    head_hash: Hash('the newest entry’s `hash` (64 zeros when there is none)'),
    signed_at: Type.String({ format: 'date-time' }),
    signature: Type.String({
      description:
        'compact JWS (EdDSA, the steward key, `kid` as in /.well-known/ocss/keys) over the JCS form of {family_id, entries, head_hash, signed_at}',
    }),
  },
  { $id: 'AuditLogHead' },
);

export const AuditQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: 50,
      description: 'default 50; larger than 200 is clamped to 200',
      'x-error-message': 'limit must be a positive integer',
    }),
  ),
  before: Type.Optional(Uuid('the id of an entry: the page holds the entries older than it')),
});
