// The sandbox's Common-Sense-style review catalog (CONTRACT.md §9: at least 40 titles across
// movie, tv, game, app and book; 220 here, docs/decisions.md "The CSM catalog"). Every title
// is made up, assembled from fixed word lists, so the catalog is identical on every deployment
// and restart and costs no database: it is data, loaded once.

export type MediaType = 'movie' | 'tv' | 'game' | 'app' | 'book';

export interface Review {
  slug: string;
  title: string;
  media_type: MediaType;
  /** CSM-style "age N+" */
  age_rating: string;
  age_range_min: number;
  /** 1-5 */
  quality_stars: number;
  is_family_friendly: boolean;
  parent_summary: string;
  descriptors: string[];
}

const OPENERS = [
  'The Lantern',
  'Starlight',
  'Paper Moon',
  'River Stone',
  'Copper Fox',
  'Hollow Pine',
  'Velvet Comet',
  'Saltwater',
  'Glass Harbor',
  'Thunder Oak',
  'Quiet Meadow',
];

const ENDINGS: Record<MediaType, string[]> = {
  movie: ['Expedition', 'Summer', 'Heist', 'Homecoming'],
  tv: ['Academy', 'Chronicles', 'Detectives', 'Kitchen'],
  game: ['Quest', 'Racers', 'Tactics', 'Builders'],
  app: ['Sketchbook', 'Flashcards', 'Chat', 'Studio'],
  book: ['Almanac', 'Secret', 'Letters', 'Mystery'],
};

/** Themes a parent reads about; each title draws two or three. */
const DESCRIPTORS = [
  'positive messages',
  'positive role models',
  'educational value',
  'mild peril',
  'fantasy violence',
  'scary scenes',
  'mild language',
  'strong language',
  'romance',
  'in-app purchases',
  'user chat',
  'ads',
  'consumerism',
  'drinking',
] as const;

const KIND: Record<MediaType, string> = {
  movie: 'A film',
  tv: 'A TV series',
  game: 'A game',
  app: 'An app',
  book: 'A book',
};

const AGES = [3, 5, 7, 8, 10, 12, 13, 15, 17] as const;

/** Deterministic 0..n-1 from a string: the same title always gets the same facts. */
function pick(seed: string, n: number): number {
  let hash = 2166136261;
  for (const char of seed) {
    hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 16777619) >>> 0;
  }
  return hash % n;
}

function slugOf(title: string, mediaType: MediaType): string {
  return `${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${mediaType}`;
}

function describe(title: string): string[] {
  const chosen = new Set<string>();
  for (const salt of ['a', 'b', 'c'].slice(0, 2 + pick(`${title}#n`, 2))) {
    chosen.add(DESCRIPTORS[pick(`${title}#${salt}`, DESCRIPTORS.length)] as string);
  }
  return [...chosen].sort();
}

function review(opener: string, ending: string, mediaType: MediaType): Review {
  const title = `${opener} ${ending}`;
  const age = AGES[pick(`${title}:${mediaType}:age`, AGES.length)] as number;
  const descriptors = describe(`${title}:${mediaType}`);
  const stars = 1 + pick(`${title}:${mediaType}:stars`, 5);
  const mature = descriptors.some((d) =>
    ['strong language', 'drinking', 'scary scenes'].includes(d),
  );
  return {
    slug: slugOf(title, mediaType),
    title,
    media_type: mediaType,
    age_rating: `age ${age}+`,
    age_range_min: age,
    quality_stars: stars,
    is_family_friendly: age <= 8 && !mature,
    parent_summary: `${KIND[mediaType]} for ages ${age} and up; parents should know about ${descriptors.join(' and ')}.`,
    descriptors,
  };
}

/** 11 openers × 4 endings × 5 media types = 220 titles, sorted by slug (the paging order). */
export const CSM_CATALOG: readonly Review[] = (Object.keys(ENDINGS) as MediaType[])
  .flatMap((mediaType) =>
    OPENERS.flatMap((opener) =>
      (ENDINGS[mediaType] ?? []).map((ending) => review(opener, ending, mediaType)),
    ),
  )
  .sort((a, b) => (a.slug < b.slug ? -1 : 1));

const BY_SLUG = new Map(CSM_CATALOG.map((entry) => [entry.slug, entry]));

export function findReview(slug: string): Review | undefined {
  return BY_SLUG.get(slug);
}

/** A viewing report's title matched case- and spacing-insensitively (its history's rating). */
const BY_TITLE = new Map(CSM_CATALOG.map((entry) => [entry.title.toLowerCase(), entry]));
export function findReviewByTitle(title: string): Review | undefined {
  return BY_TITLE.get(title.trim().replace(/\s+/g, ' ').toLowerCase());
}
