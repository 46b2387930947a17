// POST /api/v1/csm/reviews/bulk over the sandbox catalog (CONTRACT.md §9): pages of at most
// 25 reviews, in catalog order for `slugs: []` or in the order asked. The cursor is opaque
// and bound to the question: a cursor from another slug list is malformed, not a wrong page.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { OcssError } from '../../ocss/ocss-error.js';
import { CSM_CATALOG, findReview, type Review } from './catalog.js';

export const PAGE_SIZE = 25;
export const MAX_SLUGS = 100;

function questionOf(slugs: string[]): string {
  return createHash('sha256').update(slugs.join('\n')).digest('base64url').slice(0, 16);
}

function encodeCursor(offset: number, question: string): string {
  return Buffer.from(JSON.stringify({ o: offset, q: question })).toString('base64url');
}

function decodeCursor(cursor: string, question: string): number {
  if (cursor === '') {
    return 0;
  }
  try {
    const { o, q } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Number.isInteger(o) && o > 0 && q === question) {
      return o;
    }
  } catch {
    // below
  }
  throw OcssError.malformed('cursor is not one this query returned');
}

export interface ReviewsPage {
  reviews: Review[];
  next_cursor: string | null;
}

/**
 * Pages already answered, by question and cursor: the catalog is static, so a page is too,
 * and the signed fast path serializes each page object once (signed-read-fast-path.ts).
 */
const pages = new LRUCache<string, ReviewsPage>({ max: 256 });

export function bulkReviews(input: { slugs: string[]; cursor: string }): ReviewsPage {
  // JSON: no two questions share a key, whatever their strings hold. A failing question
  // throws before anything is kept.
  const key = JSON.stringify([input.cursor, input.slugs]);
  let page = pages.get(key);
  if (!page) {
    page = Object.freeze(pageOf(input));
    pages.set(key, page);
  }
  return page;
}

function pageOf(input: { slugs: string[]; cursor: string }): ReviewsPage {
  const slugs = [...new Set(input.slugs)];
  const reviews: readonly Review[] =
    slugs.length === 0
      ? CSM_CATALOG
      : slugs.map((slug) => {
          const review = findReview(slug);
          if (!review) {
            throw OcssError.standingFailure('unregistered_slug', `no catalog knows ${slug}`);
          }
          return review;
        });
  const question = questionOf(slugs);
  const offset = decodeCursor(input.cursor, question);
  const end = offset + PAGE_SIZE;
  return {
    reviews: reviews.slice(offset, end),
    next_cursor: end < reviews.length ? encodeCursor(end, question) : null,
  };
}
