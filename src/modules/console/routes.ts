// GET /console (CONTRACT.md §10.3): the developer console, served by the API itself from
// dist/console (scripts/build.mjs bundles it). Every asset comes from here; the CSP allows
// nothing else, and no inline script.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { sendFailure } from '../../http/error-handler.js';

/** dist/console, from src/modules/console (tests) and dist/modules/console (the server). */
const CONSOLE_DIR = new URL('../../../dist/console/', import.meta.url);

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const ASSETS: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const cache = new Map<string, Buffer>();
  async function asset(name: string): Promise<Buffer | undefined> {
    let body = cache.get(name);
    if (!body) {
      body = await readFile(new URL(name, CONSOLE_DIR)).catch(() => undefined);
      if (body) {
        cache.set(name, body);
      }
    }
    return body;
  }
  const unbuilt = 'the console is not built: run npm run build (npm start builds it)';

  app.get('/console', { schema: { hide: true } }, async (_request, reply) => {
    const page = await asset('index.html');
    if (!page) {
      return sendFailure(reply, { status: 503, message: unbuilt });
    }
    return reply
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(page);
  });

  // A typed-in trailing slash finds the console too.
  app.get('/console/', { schema: { hide: true } }, (_request, reply) =>
    reply.redirect('/console', 301),
  );

  app.get<{ Params: { name: string } }>(
    '/console/assets/:name',
    { schema: { hide: true } },
    async (request, reply) => {
      const type = ASSETS[request.params.name];
      const body = type ? await asset(request.params.name) : undefined;
      if (!type || !body) {
        return sendFailure(reply, { status: 404, message: 'route not found' });
      }
      return reply
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache')
        .type(type)
        .send(body);
    },
  );
}
