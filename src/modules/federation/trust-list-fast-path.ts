// The trust list's conditional read, answered ahead of Fastify (see http/fast-path.ts).
// Those 304s are not logged one line each (they would cost more than the answer); a line a
// minute says how many there were.

import type { FastifyBaseLogger } from 'fastify';
import { ifNoneMatchHits } from '../../http/conditional-get.js';
import { type FastPath, fastPathHeaders } from '../../http/fast-path.js';
import type { TrustListService } from './trust-list-service.js';

export const TRUST_LIST_PATH = '/.well-known/ocss/trust-list';
export const TRUST_LIST_CACHE_CONTROL = 'public, max-age=300';
const REPORT_EVERY_MS = 60_000;

export function trustListNotModified(
  trustList: Pick<TrustListService, 'current'>,
  log: FastifyBaseLogger,
): { path: FastPath; close(): void } {
  let answered = 0;
  const report = () => {
    if (answered > 0) {
      log.info({ route: TRUST_LIST_PATH, status: 304, count: answered }, 'conditional reads');
      answered = 0;
    }
  };
  const timer = setInterval(report, REPORT_EVERY_MS).unref();
  return {
    path(request, response) {
      if (
        request.url !== TRUST_LIST_PATH ||
        (request.method !== 'GET' && request.method !== 'HEAD')
      ) {
        return false;
      }
      const { etag } = trustList.current();
      if (!ifNoneMatchHits(request.headers['if-none-match'], etag)) {
        return false;
      }
      response.writeHead(
        304,
        fastPathHeaders(request, { etag, 'cache-control': TRUST_LIST_CACHE_CONTROL }),
      );
      response.end();
      answered++;
      return true;
    },
    close() {
      clearInterval(timer);
      report();
    },
  };
}
