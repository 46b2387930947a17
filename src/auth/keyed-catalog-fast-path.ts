// Static catalogs read with an API key, answered ahead of Fastify (see http/fast-path.ts).
// The platform list, the rule registry and the rating systems are the same bytes for every
// caller, so what a request costs is the caller's part: its admission (auth/keyed-admission.ts:
// key, scope, bucket), its usage count, its access line. This path does exactly that, with
// the route's headers, and hands anything it does not fully understand to the route
// untouched: whatever admission leaves to it, a query string, HEAD.
import type { RouteOptions } from 'fastify';
import { answerFast, type FastPathHandler } from '../http/fast-path.js';
import { endpointPattern, type UsageRecorder } from '../modules/usage/recorder.js';
import { rateLimitHeaders } from '../ratelimit/plugin.js';
import type { KeyedAdmission } from './keyed-admission.js';
import type { Scope } from './scopes.js';

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
  admit: KeyedAdmission;
  usage: Pick<UsageRecorder, 'recordKeyRequest'>;
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
      const admitted = catalog && options.admit(request, catalog.scope);
      if (!catalog || !admitted) {
        return false;
      }
      const { key, decision, now } = admitted;
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
