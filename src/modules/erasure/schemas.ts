// The erasure receipt's shape (CONTRACT.md §12.3), and the header the two DELETE routes add.
import { Type } from 'typebox';
import { DateTime, NullableDateTime, Uuid } from '../../http/common-schemas.js';

export const ERASURE_ID_HEADER = 'Haven-Erasure-Id';

export const ErasureParams = Type.Object({ erasureID: Uuid() });

/** The 204 of DELETE /families/{id} and DELETE /children/{id}. */
export function erasedResponse(subject: 'family' | 'child') {
  return {
    type: 'null',
    description: `The ${subject} is erased; its receipt is at GET /erasures/{Haven-Erasure-Id}`,
    headers: {
      [ERASURE_ID_HEADER]: Uuid(
        'the erasure: read its receipt (what was erased, per table, and each release) at GET /erasures/{id}',
      ),
    },
  } as const;
}

export const ErasureReceiptSchema = Type.Object(
  {
    id: Uuid(),
    subject: Type.Object({
      type: Type.Enum(['family', 'child']),
      id: Uuid('the erased family or child'),
    }),
    requested_at: DateTime("when the erasure was asked for, on the family's clock"),
    completed_at: NullableDateTime(
      'when every release had ended (null until then); at once when there was nothing to release',
    ),
    erased: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'rows deleted, per table: counts only, no personal value',
    }),
    releases: Type.Array(
      Type.Object({
        platform_id: Type.String(),
        status: Type.Enum(['pending', 'released', 'failed', 'skipped'], {
          description:
            '`released`: nothing Haven applied is left there; `failed`: the platform refused or could not be reached (what Haven applied may remain); `skipped`: nothing of Haven’s was there (a pending connection, a platform without an adapter); `pending` until the release has run',
        }),
      }),
      { description: 'one per platform the family was connected to' },
    ),
    signature: Type.Union([Type.String(), Type.Null()], {
      description:
        'compact JWS (EdDSA, the steward key, `kid` as in /.well-known/ocss/keys) over the RFC 8785 (JCS) form of every other field; null until completed',
    }),
  },
  { $id: 'ErasureReceipt' },
);
