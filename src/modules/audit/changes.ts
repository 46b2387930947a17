// What an audit entry's `changes` hold (CONTRACT.md §12.1): each field a change set, with its
// new value for a setting and without it for personal data, so the log holds no personal
// value (docs/decisions.md "What an audit entry says").

/** Stands for the value of a personal field the change set. */
export const REDACTED = '[redacted]';

/**
 * The changes of `input`: every field present (not undefined), its value kept unless the field
 * is one of `personal`, whose value is replaced with REDACTED. `input` names the fields the
 * change set, never a raw request body: a body may carry fields no schema knows, and whatever
 * reaches the log stays in the chain.
 */
export function auditChanges(
  input: object,
  personal: readonly string[] = [],
): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) {
      continue;
    }
    changes[field] = personal.includes(field) ? REDACTED : value;
  }
  return changes;
}
