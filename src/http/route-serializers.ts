// A fast path answering for a route (http/fast-path.ts) serializes what it answers with the
// route's own response schemas, compiled by Fastify's own compiler, so both paths write the
// same bytes.
import type { RouteOptions } from 'fastify';

/** Fastify's serializer compiler (`app.serializerCompiler`), as its routes are compiled. */
export type SerializerCompiler = (route: {
  schema: unknown;
  method: string;
  url: string;
  httpStatus: string;
}) => (payload: unknown) => string;

type ResponseSchemas = { response?: Record<string, unknown> };

/**
 * The route's serializer for a status, as Fastify picks a reply's: the status's schema, its
 * class's, the default, or plain JSON. Compiled on first use (`compiler` is read then, once
 * the app has set it up) and kept.
 */
export function routeSerializers(
  route: Pick<RouteOptions, 'method' | 'url' | 'schema'>,
  compiler: () => SerializerCompiler,
): (status: number) => (payload: unknown) => string {
  const schema = (route.schema ?? {}) as ResponseSchemas;
  const method = String(route.method);
  const serializers = new Map<number, (payload: unknown) => string>();
  return (status) => {
    let serialize = serializers.get(status);
    if (!serialize) {
      const statusSchema =
        schema.response?.[status] ??
        schema.response?.[`${String(status)[0]}xx`] ??
        schema.response?.default;
      serialize = statusSchema
        ? compiler()({ schema: statusSchema, method, url: route.url, httpStatus: String(status) })
        : JSON.stringify;
      serializers.set(status, serialize);
    }
    return serialize;
  };
}
