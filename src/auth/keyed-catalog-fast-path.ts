// Static catalogs read with an API key, answered ahead of Fastify (see http/fast-path.ts).
// The platform list, the rule registry and the rating systems are the same bytes for every
// caller, so what a request costs is the caller's part: its key (in memory: one SHA-256 and a
// map read), its scope, its org's rate-limit bucket, its usage count, its access line. This
// path does exactly that, with the route's headers, and hands anything it does not fully
// understand to the route untouched: a key not in memory (or revoked, expired, or live on a
// test deployment), a scope the key lacks, an org limit not yet known, a full bucket, a
// query string, X-Forwarded-For (the client address is then the proxy's to tell), HEAD,
// draining, Redis buckets (see allowedNow).
import type { RouteOptions } from 'fastify';
import type { Clock } from '../clock.js';
import type { AppEnv } from '../config.js';
import { answerFast, type FastPathHandler } from '../http/fast-path.js';
import type { ApiKeysService } from '../modules/api-keys/service.js';
import { endpointPattern, type UsageRecorder } from '../modules/usage/recorder.js';
import { allowedNow, orgBucket, rateLimitHeaders } from '../ratelimit/plugin.js';
import type { RateLimitStore } from '../ratelimit/stores.js';
import { readCredential } from './credentials.js';
import { grants, type Scope } from './scopes.js';
import { SECRET_PREFIXES } from './secrets.js';

interface Catalog {
  /** The JSON, encoded once: a string would be encoded again on every answer. */
  body: Buffer;
  scope: Scope | undefined;
  /** The usage report's name for the route. */
  endpoint: string;
}

export interface KeyedCatalogFastPath extends FastPathHandler {
  /** An onRoute hook: takes in every GET that declares its static JSON and accepts keys. */
  collect(route: RouteOptions): void;
}

export function keyedCatalogFastPath(options: {
  appEnv: AppEnv;
  apiKeys: Pick<ApiKeysService, 'knownKey'>;
  orgLimit(orgId: string): number | Promise<number>;
  buckets: RateLimitStore;
  usage: Pick<UsageRecorder, 'recordKeyRequest'>;
  clock: Clock;
  draining(): boolean;
}): KeyedCatalogFastPath {
  const catalogs = new Map<string, Catalog>();
  return {
    collect(route) {
      const config = route.config;
      const takesKeys = config?.auth === 'developer' || config?.auth === 'product';
      // A route with parameters is no catalog; one with a deprecation notice has headers of
      // its own: both stay with the router.
      if (
        route.method !== 'GET' ||
        typeof config?.staticJson !== 'string' ||
        !takesKeys ||
        config.deprecation ||
        /[:*]/.test(route.url)
      ) {
        return;
      }
      catalogs.set(route.url, {
        body: Buffer.from(config.staticJson),
        scope: config.scope,
        endpoint: endpointPattern(route.url),
      });
    },
    path(request, response) {
      const catalog = request.method === 'GET' ? catalogs.get(request.url ?? '') : undefined;
      if (!catalog || request.headers['x-forwarded-for'] !== undefined || options.draining()) {
        return false;
      }
      const credential = readCredential(request.headers);
      if (
        credential.kind !== 'apiKey' ||
        (options.appEnv !== 'production' && credential.secret.startsWith(SECRET_PREFIXES.liveKey))
      ) {
        return false;
      }
      const key = options.apiKeys.knownKey(credential.secret);
      if (!key || (catalog.scope && !grants(key.scopes as Scope[], catalog.scope))) {
        return false;
      }
      const limit = options.orgLimit(key.org_id);
      if (typeof limit !== 'number') {
        return false;
      }
      const now = options.clock.now();
      const decision = allowedNow(options.buckets, orgBucket(key.org_id), limit, now.getTime());
      if (!decision) {
        return false;
      }
      options.usage.recordKeyRequest({
        keyId: key.id,
        orgId: key.org_id,
        endpoint: catalog.endpoint,
        status: 200,
        at: now,
        ip: request.socket.remoteAddress ?? '',
      });
      // Added to the fresh object, not spread into a new one (see answerFast).
      const headers: Record<string, string | number> = rateLimitHeaders(decision);
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = catalog.body.length;
      return answerFast(request, response, 200, headers, catalog.body);
    },
  };
}
