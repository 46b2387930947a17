// The trust list's conditional read, answered ahead of Fastify (see http/fast-path.ts).
// Those 304s are not logged one line each (they would cost more than the answer); a line a
// minute says how many there were.

import type { FastifyBaseLogger } from 'fastify';
import { ifNoneMatchHits } from '../../http/conditional-get.js';
import { createAnswerTally, type FastPathHandler, fastPathHeaders } from '../../http/fast-path.js';
import type { TrustListService } from './trust-list-service.js';

export const TRUST_LIST_PATH = '/.well-known/ocss/trust-list';
export const TRUST_LIST_CACHE_CONTROL = 'public, max-age=300';

export function trustListNotModified(
  trustList: Pick<TrustListService, 'current'>,
  log: FastifyBaseLogger,
): FastPathHandler {
  const tally = createAnswerTally(log, TRUST_LIST_PATH, 'conditional reads');
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
      tally.count(304);
      return true;
    },
    close: tally.close,
  };
}
