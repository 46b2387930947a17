// CONTRACT.md §11.3: sandbox test clocks. Registered on sandbox deployments only (elsewhere
// every path is 404).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, Uuid } from '../../http/common-schemas.js';
import type { TestClocksService } from './service.js';

const TAGS = ['Test clocks'];

const TestClock = Type.Object(
  {
    id: Uuid(),
    name: Type.Union([Type.String(), Type.Null()]),
    frozen_time: DateTime(),
    status: Type.Enum(['ready', 'advancing'], {
      description: '`advancing` until every effect that fell due (birthdays, coming of age) ran',
    }),
    created_at: DateTime(),
  },
  { $id: 'TestClock' },
);

const FrozenTime = Type.String({ maxLength: 64, description: 'RFC 3339 date-time' });
const CreateTestClockBody = Type.Object({
  frozen_time: FrozenTime,
  name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
});
const AdvanceTestClockBody = Type.Object({ frozen_time: FrozenTime });
const TestClockParams = Type.Object({ clockID: Uuid() });

export function testClockRoutes(
  clocks: TestClocksService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });
    const write = { auth: surface.auth, scope: 'write:families' as const, errors: [401, 403, 404] };

    app.post(
      '/sandbox/test-clocks',
      {
        config: { ...write, errors: [401, 403] },
        schema: {
          ...route('createTestClock', 'Create a test clock (sandbox)'),
          description:
            'A frozen time you own. Families attached to it (`test_clock_id` on POST/PATCH /families or quick setup) live by it: ages, birthdays, coming of age.',
          body: CreateTestClockBody,
          response: { 201: TestClock },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await clocks.create(requirePrincipal(request), request.body)),
    );

    app.get(
      '/sandbox/test-clocks/:clockID',
      {
        config: { auth: surface.auth, scope: 'read:families', errors: [401, 403, 404] },
        schema: {
          ...route('getTestClock', 'Get a test clock (sandbox)'),
          params: TestClockParams,
          response: { 200: TestClock },
        },
      },
      async (request) => clocks.get(requirePrincipal(request), request.params.clockID),
    );

    app.post(
      '/sandbox/test-clocks/:clockID/advance',
      {
        config: { ...write, errors: [401, 403, 404, 409] },
        schema: {
          ...route('advanceTestClock', 'Advance a test clock (sandbox)'),
          description:
            'Moves the clock forward (at most 2 years per call) and runs, in order, every effect that fell due for its families: birthdays re-derive age rules and enforce them (`trigger_type: age_change`), the 18th birthday pauses and releases, with the same webhooks as in real time. `status` is `advancing` until they ran, then `ready`; advancing again meanwhile is 409.',
          params: TestClockParams,
          body: AdvanceTestClockBody,
          response: { 200: TestClock },
        },
      },
      async (request) =>
        clocks.advance(requirePrincipal(request), request.params.clockID, request.body),
    );

    app.delete(
      '/sandbox/test-clocks/:clockID',
      {
        config: write,
        schema: {
          ...route('deleteTestClock', 'Delete a test clock (sandbox)'),
          description: 'Its families return to the real clock; their ages are applied again.',
          params: TestClockParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await clocks.remove(requirePrincipal(request), request.params.clockID);
        return reply.code(204).send(null);
      },
    );
  };
}
