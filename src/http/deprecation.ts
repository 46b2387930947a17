// Deprecation signals (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, `Link` relations), set per
// route through its `config.deprecation`; the same option marks the OpenAPI operation.
import type { onSendHookHandler, RouteOptions } from 'fastify';

export interface DeprecationNotice {
  /** When the route became deprecated. */
  since: Date;
  /** The committed removal date, once published. */
  sunset?: Date;
  /** Where a developer reads about the deprecation (and, by default, the sunset). */
  link?: string;
  sunsetLink?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    deprecation?: DeprecationNotice;
  }
}

export function deprecationHeaders(notice: DeprecationNotice): Record<string, string> {
  const headers: Record<string, string> = {
    deprecation: `@${Math.floor(notice.since.getTime() / 1000)}`,
  };
  const links: string[] = [];
  if (notice.link) {
    links.push(`<${notice.link}>; rel="deprecation"`);
  }
  if (notice.sunset) {
    headers.sunset = notice.sunset.toUTCString();
    const sunsetLink = notice.sunsetLink ?? notice.link;
    if (sunsetLink) {
      links.push(`<${sunsetLink}>; rel="sunset"`);
    }
  }
  if (links.length > 0) {
    headers.link = links.join(', ');
  }
  return headers;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) {
    return [];
  }
  return Array.isArray(value) ? value : [value];
}

/** onRoute step: a deprecated route announces it on every response and in the document. */
export function applyDeprecation(route: RouteOptions): void {
  const notice = route.config?.deprecation;
  if (!notice) {
    return;
  }
  const headers = deprecationHeaders(notice);
  route.schema = { ...route.schema, deprecated: true } as RouteOptions['schema'];
  const announce: onSendHookHandler = async (_request, reply, payload) => {
    reply.headers(headers);
    return payload;
  };
  route.onSend = [...asArray(route.onSend), announce] as RouteOptions['onSend'];
}
