// Reads by id with an API key (a family, its children, a child), answered ahead of Fastify
// (see http/fast-path.ts). Such a read is one statement (docs/decisions.md "One round trip per
// authorized read"); routing, validation, a dozen hooks and the reply's machinery cost ~13 µs a
// keyed request on the bench VM (a keyed catalog read: ~30 µs routed, ~17 ahead of the router),
// a fifth of the whole read (docs/decisions.md "Keyed reads ahead of the router"). A route opts
// in by declaring its read as `config.keyedRead`, the same function its handler calls, so both
// paths answer from one piece of code. Admission is the keyed catalog's
// (auth/keyed-admission.ts); past it the request is this path's: it runs the read,
// serializes the answer with the route's own response schema (Fastify's compiler), and
// answers a failure in the house envelope as the error handler would, with the same log
// line, headers, usage count and access line. What it does not fully understand goes to the
// route untouched: anything but a GET of the exact path, an id that is not a lowercase
// canonical UUID (the route's validation answers the rest), a query string, and whatever
// admission leaves to it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, RouteOptions } from 'fastify';
import type { InFlight } from '../http/draining.js';
import { answerMetered, type FastPathHandler, failureAnswer } from '../http/fast-path.js';
import { requestIdFor } from '../http/request-log.js';
import { routeSerializers, type SerializerCompiler } from '../http/route-serializers.js';
import { endpointPattern, type UsageRecorder } from '../modules/usage/recorder.js';
import { keyPrincipal } from './authenticate.js';
import type { Admitted, KeyedAdmission } from './keyed-admission.js';
import type { Principal } from './principal.js';

/**
 * What a route answers for a principal and its path parameters: its handler calls it for
 * every caller, the fast path for a key's.
 */
export type KeyedRead<T = unknown> = (
  principal: Principal,
  params: Readonly<Record<string, string>>,
) => Promise<T>;

/** A route's read, typed by what it answers (which the handler's schema then checks). */
export function keyedRead<T>(read: KeyedRead<T>): KeyedRead<T> {
  return read;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's read for an API key, answered ahead of the router when the key is in
     * memory. The route's handler must answer a key's request with this same function.
     */
    keyedRead?: KeyedRead;
  }
}

/** Lowercase canonical UUIDs only: any other spelling is the route's validation's to judge. */
const UUID = '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})';

type Schema = {
  params?: { properties?: Record<string, { format?: string }> };
  querystring?: unknown;
};

/**
 * The route's path as a pattern with one UUID group per parameter, and the parameters'
 * names; undefined for a route this path does not take (a wildcard, a parameter that is not
 * a UUID, a query schema whose defaults the read would not see).
 */
function patternOf(url: string, schema: Schema): { pattern: RegExp; names: string[] } | undefined {
  if (url.includes('*') || schema.querystring !== undefined) {
    return undefined;
  }
  const names: string[] = [];
  const segments = url.split('/').map((segment) => {
    if (!segment.startsWith(':')) {
      return segment.replace(/[.+?^${}()|[\]\\-]/g, '\\$&');
    }
    names.push(segment.slice(1));
    return UUID;
  });
  const typed = names.every((name) => schema.params?.properties?.[name]?.format === 'uuid');
  if (names.length === 0 || !typed) {
    return undefined;
  }
  return { pattern: new RegExp(`^${segments.join('/')}$`), names };
}

export interface KeyedReadOptions {
  admit: KeyedAdmission;
  usage: Pick<UsageRecorder, 'recordKeyRequest'>;
  /** Fastify's compiler; read on first use, once the app has set it up. */
  serializerCompiler(): SerializerCompiler;
  /** Answers in hand hold a drain like routed requests. */
  inFlight: InFlight;
  draining(): boolean;
  log: FastifyBaseLogger;
}

/**
 * An onRoute step: a fast path for the route if it declares a keyed read this path can
 * take, to be added to the server's fast paths.
 */
export function keyedReadFastPath(
  route: RouteOptions,
  options: KeyedReadOptions,
): FastPathHandler | undefined {
  const config = route.config;
  const schema = (route.schema ?? {}) as Schema;
  const takesKeys = config?.auth === 'developer' || config?.auth === 'product';
  const shape = patternOf(route.url, schema);
  if (route.method !== 'GET' || !config?.keyedRead || !takesKeys || config.deprecation || !shape) {
    return undefined;
  }
  const read = config.keyedRead;
  const { pattern, names } = shape;
  const scope = config.scope;
  const endpoint = endpointPattern(route.url);
  const serializerFor = routeSerializers(route, options.serializerCompiler);

  function paramsOf(match: RegExpExecArray): Record<string, string> {
    const params: Record<string, string> = {};
    for (let at = 0; at < names.length; at++) {
      params[names[at] as string] = match[at + 1] as string;
    }
    return params;
  }

  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    { key, decision, now }: Admitted,
    params: Record<string, string>,
  ): Promise<string> {
    options.inFlight.enter();
    response.once('close', options.inFlight.leave);
    const requestId = requestIdFor(request);
    let status = 200;
    let body: string;
    try {
      body = serializerFor(200)(await read(keyPrincipal(key), params));
    } catch (error) {
      ({ status, body } = failureAnswer(error as Error, options.log, requestId, serializerFor));
    }
    options.usage.recordKeyRequest({
      keyId: key.id,
      orgId: key.org_id,
      endpoint,
      status,
      at: now,
      ip: request.socket.remoteAddress ?? '',
    });
    return answerMetered(request, response, status, decision, body, options.draining(), requestId);
  }

  return {
    route: route.url,
    path(request, response) {
      const match = request.method === 'GET' ? pattern.exec(request.url ?? '') : null;
      const admitted = match && options.admit(request, scope);
      if (!match || !admitted) {
        return false;
      }
      return answer(request, response, admitted, paramsOf(match));
    },
  };
}
