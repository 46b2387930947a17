// The device poll answered ahead of Fastify (see http/fast-path.ts): the one request a fleet
// of agents sends every minute. When the device's key and its child's policy in force are in
// memory, a poll that names the current version (If-None-Match or since_version) gets its 304
// here, and one that does not gets the compiled body if that version's is in memory too;
// both with what the route would write: the same tag and cache headers, the device's own
// rate-limit bucket counted and its headers, the request id, nosniff and CORS, the device's
// last-seen stamp. Anything else (a key, version or body not in memory, a malformed query,
// draining, a full bucket, Redis buckets: see allowedNow) goes to the route untouched, and
// is counted there, once; with REDIS_URL the route answers, still without the database.
import type { Clock } from '../../clock.js';
import { ifNoneMatchHits } from '../../http/conditional-get.js';
import { answerFast, type FastPathHandler } from '../../http/fast-path.js';
import {
  allowedNow,
  DEFAULT_LIMIT,
  deviceBucket,
  rateLimitHeaders,
} from '../../ratelimit/plugin.js';
import type { RateLimitStore } from '../../ratelimit/stores.js';
import type { DeviceAgentService } from './agent-service.js';
import type { DevicesService } from './service.js';

const POLICY_PATH = '/api/v1/device/policy';
const SINCE_VERSION = /^since_version=(\d{1,15})$/;

/** The version a poll names in its query: undefined without one, null when not understood. */
function sinceVersionOf(url: string): number | undefined | null {
  if (url === POLICY_PATH) {
    return undefined;
  }
  if (!url.startsWith(`${POLICY_PATH}?`)) {
    return null;
  }
  const match = SINCE_VERSION.exec(url.slice(POLICY_PATH.length + 1));
  return match ? Number(match[1]) : null;
}

export function devicePollFastPath(options: {
  devices: Pick<DevicesService, 'knownDeviceKey'>;
  agent: Pick<DeviceAgentService, 'knownPolicyVersion' | 'knownCompiledPolicy'>;
  buckets: RateLimitStore;
  clock: Clock;
  draining(): boolean;
}): FastPathHandler {
  return {
    route: POLICY_PATH,
    path(request, response) {
      if (request.method !== 'GET') {
        return false;
      }
      const sinceVersion = sinceVersionOf(request.url ?? '');
      const key = request.headers['x-device-key'];
      if (sinceVersion === null || typeof key !== 'string' || options.draining()) {
        return false;
      }
      const device = options.devices.knownDeviceKey(key.trim());
      const current = device && options.agent.knownPolicyVersion(device);
      if (!device || !current) {
        return false;
      }
      const etag = `"${current.id}.${current.version}"`;
      const unchanged =
        sinceVersion === current.version || ifNoneMatchHits(request.headers['if-none-match'], etag);
      const policy = unchanged ? undefined : options.agent.knownCompiledPolicy(current);
      if (!unchanged && !policy) {
        return false;
      }
      const decision = allowedNow(
        options.buckets,
        deviceBucket(device.id),
        DEFAULT_LIMIT,
        options.clock.now().getTime(),
      );
      if (!decision) {
        return false;
      }
      // Added to the fresh object, not spread into a new one (see answerFast).
      const headers: Record<string, string | number> = rateLimitHeaders(decision);
      headers['cache-control'] = 'private, no-cache';
      headers.etag = etag;
      if (!policy) {
        return answerFast(request, response, 304, headers);
      }
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = Buffer.byteLength(policy.json);
      return answerFast(request, response, 200, headers, policy.json);
    },
  };
}
