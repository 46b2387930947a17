// Schema pieces every module uses, so their wording and limits are the same everywhere.
import { Type } from 'typebox';

export const Uuid = (description?: string) =>
  Type.String({ format: 'uuid', ...(description ? { description } : {}) });

export const DateTime = (description?: string) =>
  Type.Unsafe<Date | string>({
    type: 'string',
    format: 'date-time',
    ...(description ? { description } : {}),
  });

export const NullableDateTime = (description?: string) =>
  Type.Unsafe<Date | string | null>({
    type: ['string', 'null'],
    format: 'date-time',
    ...(description ? { description } : {}),
  });

/** Names and labels: 1-255 characters (trimmed by the service). */
export const Name = (description?: string) =>
  Type.String({ minLength: 1, maxLength: 255, ...(description ? { description } : {}) });

/** The most rows a list answers; a larger `limit` is clamped, not refused (CONTRACT.md §8). */
export const MAX_PAGE_LIMIT = 100;

export function clampPageLimit(limit: number): number {
  return Math.min(limit, MAX_PAGE_LIMIT);
}
