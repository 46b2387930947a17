// CONTRACT.md §11.2: a child's age signals, recorded and listed.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, Uuid } from '../../http/common-schemas.js';
import { ERROR_MESSAGE_KEYWORD } from '../../http/validation-message.js';
import { ChildParams } from '../children/routes.js';
import { AGE_SIGNAL_SOURCES } from './signals.js';
import {
  AGE_SIGNAL_MESSAGES,
  type AgeSignalsService,
  MAX_METHOD_LENGTH,
  MAX_SIGNAL_AGE,
} from './signals-service.js';

const TAGS = ['Children'];

const SOURCES_TEXT = AGE_SIGNAL_SOURCES.join(', ');

/** An age bound: a whole number of years, or null for an open end. */
const Bound = (description: string, message?: string) =>
  Type.Unsafe<number | null>({
    type: ['integer', 'null'],
    minimum: 0,
    maximum: MAX_SIGNAL_AGE,
    description,
    ...(message ? { [ERROR_MESSAGE_KEYWORD]: message } : {}),
  });

export const AgeSignal = Type.Object(
  {
    id: Uuid(),
    child_id: Uuid(),
    source: Type.Enum([...AGE_SIGNAL_SOURCES], { description: 'who reported the range' }),
    age_lower: Bound('the youngest the child may be (null: no lower bound)'),
    age_upper: Bound('the oldest the child may be (null: open)'),
    method: Type.Union([Type.String(), Type.Null()], {
      description: 'how the source came to the range, in its own words (e.g. guardianDeclared)',
    }),
    observed_at: DateTime('when the source observed the range'),
    created_at: DateTime(),
  },
  { $id: 'AgeSignal' },
);

const RecordAgeSignalBody = Type.Object({
  // Checked by the service, so any other value gets the contract's message naming it.
  source: Type.String({ description: `one of: ${SOURCES_TEXT}` }),
  age_lower: Type.Optional(
    Bound(
      `the youngest the child may be, 0-${MAX_SIGNAL_AGE}; null or absent: no lower bound (at least one bound is required)`,
      AGE_SIGNAL_MESSAGES.ageLower,
    ),
  ),
  age_upper: Type.Optional(
    Bound(
      `the oldest the child may be, 0-${MAX_SIGNAL_AGE}, not below age_lower; null or absent: open`,
      AGE_SIGNAL_MESSAGES.ageUpper,
    ),
  ),
  method: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: MAX_METHOD_LENGTH }), Type.Null()], {
      description:
        'the declaration kind as the platform names it (e.g. guardianDeclared, SUPERVISED)',
    }),
  ),
  observed_at: Type.Optional(
    Type.String({
      format: 'date-time',
      description: "when the source observed it; default now (the family's clock), never later",
    }),
  ),
});

export function ageSignalRoutes(
  signals: AgeSignalsService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:children' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:children' as const };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/children/:childID/age-signals',
      {
        config: write,
        schema: {
          ...route(
            'recordAgeSignal',
            'Record an age range a platform or verifier reported for a child (owner or parent); the latest of each source counts toward the effective age',
          ),
          params: ChildParams,
          body: RecordAgeSignalBody,
          response: { 201: AgeSignal },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await signals.recordSignal(
              requirePrincipal(request),
              request.params.childID,
              request.body,
            ),
          ),
    );

    app.get(
      '/children/:childID/age-signals',
      {
        config: read,
        schema: {
          ...route('listAgeSignals', 'The age signals recorded for a child, newest first'),
          params: ChildParams,
          response: { 200: Type.Array(AgeSignal) },
        },
      },
      async (request) => signals.listSignals(requirePrincipal(request), request.params.childID),
    );
  };
}
