// TypeBox schemas of the enforcement routes (CONTRACT.md §8) and the sandbox's failure switch.
import { Type } from 'typebox';
import { DateTime, NullableDateTime, Uuid } from '../../http/common-schemas.js';

const PLATFORM_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]*$';
const PLATFORM_ID_MESSAGE =
  "platform_id must be 1-128 characters of letters, digits, '.', '_', ':' or '-'";

const PlatformId = (description?: string) =>
  Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: PLATFORM_ID_PATTERN,
    'x-error-message': PLATFORM_ID_MESSAGE,
    ...(description ? { description } : {}),
  });

export const EnforcementResult = Type.Object(
  {
    platform_id: Type.String(),
    connection_id: Uuid(),
    status: Type.Enum(['success', 'failed', 'unsupported'], {
      description: 'unsupported: no adapter can enforce this platform here (never attempted)',
    }),
    rules_applied: Type.Integer({ minimum: 0 }),
    rules_skipped: Type.Integer({
      minimum: 0,
      description: 'enabled rules the platform has no capability to enforce',
    }),
    rules_failed: Type.Integer({ minimum: 0 }),
    error_message: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'EnforcementResult' },
);

export const EnforcementJob = Type.Object(
  {
    id: Uuid(),
    child_id: Uuid(),
    policy_id: Uuid(),
    policy_version: Type.Integer({
      description: 'the version enforced (set again when the job runs: the policy in force then)',
    }),
    trigger_type: Type.Enum(['manual', 'policy_change', 'age_change', 'release'], {
      description:
        'manual: asked for; policy_change: the policy in force changed; age_change: a birthday or age signal derived its age rules again; release: the child has no active policy left (paused, deleted, came of age), so every platform goes back to nothing Haven wants for the child (or to a policy active again by the time the job runs)',
    }),
    status: Type.Enum(['pending', 'running', 'completed', 'failed', 'partial']),
    created_at: DateTime(),
    started_at: NullableDateTime(),
    completed_at: NullableDateTime(),
    results: Type.Array(EnforcementResult),
  },
  { $id: 'EnforcementJob' },
);

/** The body is optional: no body (or `null`) enforces on every connected platform. */
export const EnforceBody = Type.Union([
  Type.Object({
    platform_ids: Type.Optional(
      Type.Array(PlatformId(), {
        minItems: 1,
        maxItems: 64,
        description: 'only these connected platforms (default: every connected platform)',
      }),
    ),
  }),
  Type.Null(),
]);

export const ChildParams = Type.Object({ childID: Uuid() });
export const JobParams = Type.Object({ jobID: Uuid() });

const Limit = Type.Integer({
  minimum: 1,
  default: 20,
  description: 'default 20; larger than 100 is clamped to 100',
  'x-error-message': 'limit must be a positive integer',
});

export const JobListQuery = Type.Object({ limit: Type.Optional(Limit) });

export const HistoryQuery = Type.Object({
  limit: Type.Optional(Limit),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000_000,
      default: 0,
      'x-error-message': 'offset must be an integer between 0 and 1000000000',
    }),
  ),
});

export const SandboxPlatformParams = Type.Object({
  platformID: Type.String({ minLength: 1, maxLength: 128, pattern: PLATFORM_ID_PATTERN }),
});

export const ArmFailureBody = Type.Object({
  family_id: Uuid('the family whose enforcement jobs fail on this platform'),
  times: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'fail the next N runs on this platform; omitted: until cleared',
      'x-error-message': 'times must be an integer between 1 and 1000',
    }),
  ),
  message: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: 'reported in error_message' }),
  ),
});

export const ClearFailureQuery = Type.Object({
  family_id: Uuid('the family the failure was armed for'),
});

export const ArmedFailure = Type.Object(
  {
    family_id: Uuid(),
    platform_id: Type.String(),
    remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'runs left to fail; null: every run until cleared',
    }),
    message: Type.String(),
    created_at: DateTime(),
  },
  { $id: 'SandboxPlatformFailure' },
);
