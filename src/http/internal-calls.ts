// Requests the service makes to itself (the MCP server running a tool through its REST
// route with app.inject). They carry a per-process secret header so that the rate limiter
// counts the outer request only once; nothing outside this process can know the secret.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const INTERNAL_CALL_HEADER = 'x-haven-internal-call';
const SECRET = randomBytes(32).toString('hex');
const SECRET_BYTES = Buffer.from(SECRET);

export function internalCallHeaders(): Record<string, string> {
  return { [INTERNAL_CALL_HEADER]: SECRET };
}

export function isInternalCall(request: FastifyRequest): boolean {
  const value = request.headers[INTERNAL_CALL_HEADER];
  if (typeof value !== 'string' || value.length !== SECRET.length) {
    return false;
  }
  return timingSafeEqual(Buffer.from(value), SECRET_BYTES);
}
