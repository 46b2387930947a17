// For tests of the fast paths answered ahead of the router (http/fast-path.ts): which of a
// listening app's requests Fastify routed, and the headers both ways must write alike.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

/**
 * Headers whose values a fast path and its route write alike (the date, the request id and
 * the window's count move).
 */
export const HEADERS_WRITTEN_ALIKE = [
  'content-type',
  'content-length',
  'x-ratelimit-limit',
  'x-content-type-options',
  'access-control-allow-origin',
  'access-control-expose-headers',
];

/**
 * A fast path's answer against the route's: the same status and bytes, the same values of
 * the headers written alike, and no header more or less.
 */
export async function expectSameAnswer(
  fast: Response,
  reference: Response,
  what: string,
): Promise<void> {
  expect(fast.status, what).toBe(reference.status);
  expect(await fast.text(), what).toBe(await reference.text());
  for (const name of HEADERS_WRITTEN_ALIKE) {
    expect(fast.headers.get(name), `${what} ${name}`).toBe(reference.headers.get(name));
  }
  expect([...fast.headers.keys()].sort(), what).toEqual([...reference.headers.keys()].sort());
}

/**
 * A key without a route's scope, asked twice: the route's 403 naming the scope both times
 * (the fast path never learns to answer it).
 */
export async function expectScopeRefusedTwice(
  read: () => Promise<Response>,
  scope: string,
): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const refused = await read();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      message: `missing required scope: ${scope}`,
    });
  }
}

/**
 * A plugin for buildListeningTestApp that records the URL of every request of the socket
 * (not the test's injected ones) that Fastify routed: onResponse sees each, refused ones too.
 */
export function routedRequests(): {
  routed: string[];
  plugin: (app: FastifyInstance) => Promise<void>;
} {
  const routed: string[] = [];
  async function plugin(app: FastifyInstance) {
    app.addHook('onResponse', (request, _reply, done) => {
      if (request.headers['user-agent'] !== 'lightMyRequest') {
        routed.push(request.url);
      }
      done();
    });
  }
  // Not encapsulated: the hook sees every routed request of the app.
  Object.assign(plugin, { [Symbol.for('skip-override')]: true });
  return { routed, plugin };
}
