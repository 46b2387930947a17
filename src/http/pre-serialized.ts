// Static catalogs are serialised once at start; a JSON string sent with a JSON content type
// goes out as is. The response schema still documents the shape (and is what the string
// was produced to match), so the type provider is told this string stands for that shape.
import type { FastifyReply } from 'fastify';

export function sendPreSerialized(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The JSON this GET always answers with (a static catalog, serialised once): the keyed
     * catalog read's fast path (auth/keyed-catalog-fast-path.ts) sends it too.
     */
    staticJson?: string;
  }
}
