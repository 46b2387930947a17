// CONTRACT.md §8 device rows, the agent side: GET /device/policy, POST /device/report,
// POST /device/ack, authenticated by X-Device-Key alone (only under /api/v1).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireDevice } from '../../auth/principal.js';
import { ifNoneMatchHits, NotModified } from '../../http/conditional-get.js';
import type { DeviceAgentService } from './agent-service.js';
import {
  AckBody,
  AckResult,
  CompiledPolicy,
  PolicyQuery,
  ReportAccepted,
  ReportBody,
} from './schemas.js';

const TAGS = ['Device agent'];
const SECURITY = [{ deviceKey: [] }];
const config = { auth: 'device' as const, errors: [401] };

export function deviceAgentRoutes(agent: DeviceAgentService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/device/policy',
      {
        config: { ...config, errors: [401, 404] },
        schema: {
          operationId: 'getDevicePolicy',
          summary: 'The compiled policy of the device’s child (ETag; since_version → 304)',
          tags: TAGS,
          security: SECURITY,
          querystring: PolicyQuery,
          response: {
            200: CompiledPolicy,
            304: NotModified('Unchanged: since_version or If-None-Match names the current one'),
          },
        },
      },
      async (request, reply) => {
        const device = requireDevice(request);
        // Answering "unchanged" costs no database work once key and version are cached.
        const current = await agent.currentPolicyVersion(device);
        const etag = `"${current.id}.${current.version}"`;
        reply.header('cache-control', 'private, no-cache');
        if (
          request.query.since_version === current.version ||
          ifNoneMatchHits(request.headers['if-none-match'], etag)
        ) {
          return reply.header('etag', etag).code(304).send();
        }
        const policy = await agent.compiledPolicy(device, current);
        // The policy may have changed since the first look: the tag names what is sent. The
        // body is serialised already (the CompiledPolicy schema's JSON); Fastify sends a
        // string with a JSON content type as it is, which the type provider cannot express.
        return reply
          .header('etag', `"${policy.policyId}.${policy.version}"`)
          .type('application/json; charset=utf-8')
          .send(policy.json as never);
      },
    );

    app.post(
      '/api/v1/device/report',
      {
        config,
        schema: {
          operationId: 'sendDeviceReport',
          summary: 'A report from the device (kept; viewing reports fill the viewing history)',
          tags: TAGS,
          security: SECURITY,
          body: ReportBody,
          response: { 202: ReportAccepted },
        },
      },
      async (request, reply) => {
        await agent.report(requireDevice(request), request.body);
        return reply.code(202).send({ status: 'accepted' as const });
      },
    );

    app.post(
      '/api/v1/device/ack',
      {
        config,
        schema: {
          operationId: 'acknowledgeDevicePolicy',
          summary: 'The policy version the device now enforces',
          tags: TAGS,
          security: SECURITY,
          body: AckBody,
          response: { 200: AckResult },
        },
      },
      async (request) => agent.acknowledge(requireDevice(request), request.body.version),
    );
  };
}
