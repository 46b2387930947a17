// The site icon browsers ask every Haven page for (/docs, the consent page, the console):
// served here so a page's first load is not a 404 in the console. An SVG shield, sent as
// SVG (browsers take it from /favicon.ico by its content type).
import type { FastifyInstance } from 'fastify';

const ICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
    '<path d="M16 2 4 7v8c0 7.4 5.1 13.4 12 15 6.9-1.6 12-7.6 12-15V7z" fill="#1d4ed8"/>' +
    '<path d="m11 16 3.5 3.5L21.5 12" fill="none" stroke="#fff" stroke-width="3" ' +
    'stroke-linecap="round" stroke-linejoin="round"/></svg>',
);

export function registerFavicon(app: FastifyInstance): void {
  app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) => {
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(ICON);
  });
}
