// A child's viewing history (CONTRACT.md §8 viewing-history row): what the child's devices
// reported watching, each entry with the CSM catalog review of its title when there is one.

import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { clampPageLimit } from '../../http/common-schemas.js';
import { CHILD_NOT_FOUND } from '../children/service.js';
import { findReviewByTitle, type Review } from '../csm/catalog.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import { insertViewingEntry, listViewingHistoryRead, type ViewingEntryRow } from './store.js';

export const DEFAULT_LIMIT = 50;

export interface ViewingInput {
  childId: string;
  deviceId: string;
  platform: string;
  title: string;
  seriesTitle: string | null;
  watchedAt: Date;
}

/**
 * The catalog review matched by title; an episode title rarely matches, so the series title
 * is tried next. Null when neither is in the catalog.
 */
export function ratingOf(entry: Pick<ViewingEntryRow, 'title' | 'series_title'>) {
  const review: Review | undefined =
    findReviewByTitle(entry.title) ??
    (entry.series_title === null ? undefined : findReviewByTitle(entry.series_title));
  if (!review) {
    return null;
  }
  return {
    system: 'csm' as const,
    slug: review.slug,
    title: review.title,
    media_type: review.media_type,
    age_rating: review.age_rating,
    age_range_min: review.age_range_min,
    quality_stars: review.quality_stars,
    is_family_friendly: review.is_family_friendly,
    descriptors: review.descriptors,
  };
}

export function createViewingHistoryService(deps: {
  db: Db;
  clock: Clock;
  families: Pick<FamiliesService, 'visibleRows'>;
}) {
  const { db, clock } = deps;
  return {
    /** One entry; `executor` lets the device report that carries it write both at once. */
    async recordViewing(input: ViewingInput, executor: Db = db): Promise<void> {
      await insertViewingEntry(executor, {
        id: randomUUID(),
        child_id: input.childId,
        device_id: input.deviceId,
        platform: input.platform,
        title: input.title,
        series_title: input.seriesTitle,
        watched_at: input.watchedAt,
        created_at: clock.now(),
      });
    },

    /** Newest first; a limit over the maximum is clamped, like the enforcement history. */
    async listHistory(
      principal: Principal,
      childId: string,
      page: { limit?: number; offset?: number },
    ) {
      const result = await listViewingHistoryRead(db, childId, tenantOf(principal), {
        limit: clampPageLimit(page.limit ?? DEFAULT_LIMIT),
        // Past every row anyway; keeps a huge offset a number PostgreSQL takes.
        offset: Math.min(page.offset ?? 0, Number.MAX_SAFE_INTEGER),
      });
      const rows = deps.families.visibleRows(principal, result, 'id', CHILD_NOT_FOUND);
      return rows.map((row) => ({ ...row, rating: ratingOf(row) }));
    },
  };
}

export type ViewingHistoryService = ReturnType<typeof createViewingHistoryService>;
