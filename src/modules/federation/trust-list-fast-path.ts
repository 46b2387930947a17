// The trust list's conditional read, answered ahead of Fastify (see http/fast-path.ts).
import { ifNoneMatchHits } from '../../http/conditional-get.js';
import { answerFast, type FastPathHandler } from '../../http/fast-path.js';
import type { TrustListService } from './trust-list-service.js';

export const TRUST_LIST_PATH = '/.well-known/ocss/trust-list';
export const TRUST_LIST_CACHE_CONTROL = 'public, max-age=300';

export function trustListNotModified(
  trustList: Pick<TrustListService, 'current'>,
): FastPathHandler {
  return {
    route: TRUST_LIST_PATH,
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
      return answerFast(request, response, 304, {
        etag,
        'cache-control': TRUST_LIST_CACHE_CONTROL,
      });
    },
  };
}
