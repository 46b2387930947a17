// The five rating systems and the maximum rating a child may see at each age (DOMAIN.md
// "Ratings"). Loaded once; every catalog request is answered from memory.

export type RatingSystemId = 'csm' | 'esrb' | 'mpaa' | 'pegi' | 'tvpg';

export interface Rating {
  code: string;
  /** The youngest age the rating is meant for. */
  min_age: number;
}

export interface RatingSystem {
  id: RatingSystemId;
  name: string;
  country: string;
  media_type: 'general' | 'game' | 'movie' | 'tv';
  description: string;
  /** Least to most restrictive. */
  ratings: Rating[];
}

const r = (code: string, minAge: number): Rating => ({ code, min_age: minAge });

export const RATING_SYSTEMS: readonly RatingSystem[] = [
  {
    id: 'csm',
    name: 'Common Sense Media',
    country: 'US',
    media_type: 'general',
    description: 'Common Sense Media age-based ratings',
    ratings: [
      r('2+', 2),
      r('5+', 5),
      r('7+', 7),
      r('10+', 10),
      r('13+', 13),
      r('15+', 15),
      r('17+', 17),
      r('18+', 18),
    ],
  },
  {
    id: 'esrb',
    name: 'ESRB',
    country: 'US',
    media_type: 'game',
    description: 'Entertainment Software Rating Board',
    ratings: [r('E', 0), r('E10+', 10), r('T', 13), r('M', 17), r('AO', 18)],
  },
  {
    id: 'mpaa',
    name: 'MPAA',
    country: 'US',
    media_type: 'movie',
    description: 'Motion Picture Association film rating system',
    ratings: [r('G', 0), r('PG', 0), r('PG-13', 13), r('R', 17), r('NC-17', 18)],
  },
  {
    id: 'pegi',
    name: 'PEGI',
    country: 'EU',
    media_type: 'game',
    description: 'Pan European Game Information',
    ratings: [r('3', 3), r('7', 7), r('12', 12), r('16', 16), r('18', 18)],
  },
  {
    id: 'tvpg',
    name: 'TV Parental Guidelines',
    country: 'US',
    media_type: 'tv',
    description: 'US television content rating system',
    ratings: [
      r('TV-Y', 0),
      r('TV-Y7', 7),
      r('TV-G', 0),
      r('TV-PG', 0),
      r('TV-14', 14),
      r('TV-MA', 17),
    ],
  },
];

export type MaxRatings = Record<RatingSystemId, string>;

/** Maximum rating per system, by the youngest age of each row (DOMAIN.md table). */
const MAX_RATINGS_BY_AGE: ReadonlyArray<{ from: number; ratings: MaxRatings }> = [
  { from: 18, ratings: { mpaa: 'NC-17', tvpg: 'TV-MA', esrb: 'AO', pegi: '18', csm: '18+' } },
  { from: 17, ratings: { mpaa: 'R', tvpg: 'TV-MA', esrb: 'M', pegi: '16', csm: '17+' } },
  { from: 13, ratings: { mpaa: 'PG-13', tvpg: 'TV-14', esrb: 'T', pegi: '12', csm: '13+' } },
  { from: 10, ratings: { mpaa: 'PG', tvpg: 'TV-PG', esrb: 'E10+', pegi: '7', csm: '10+' } },
  { from: 7, ratings: { mpaa: 'PG', tvpg: 'TV-Y7', esrb: 'E', pegi: '7', csm: '7+' } },
  { from: 0, ratings: { mpaa: 'G', tvpg: 'TV-Y', esrb: 'E', pegi: '3', csm: '5+' } },
];

export function maxRatingsForAge(age: number): MaxRatings {
  const row = MAX_RATINGS_BY_AGE.find((candidate) => age >= candidate.from);
  if (!row) {
    throw new Error(`no rating row for age ${age}`);
  }
  return { ...row.ratings };
}

const BY_ID = new Map(RATING_SYSTEMS.map((system) => [system.id, system]));

export function findRatingSystem(id: string): RatingSystem | undefined {
  return BY_ID.get(id as RatingSystemId);
}
