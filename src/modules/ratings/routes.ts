// Spec: "Rating system"; CONTRACT.md §7 (ratings rows). Static: answered from memory.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProductSurface } from '../../auth/product-surface.js';
import { NotFoundError } from '../../http/errors.js';
import { sendPreSerialized } from '../../http/pre-serialized.js';
import { bandForAge } from '../age/bands.js';
import { findRatingSystem, maxRatingsForAge, RATING_SYSTEMS } from './catalog.js';

const TAGS = ['Ratings'];

const RatingSystemFields = {
  id: Type.Enum(['csm', 'esrb', 'mpaa', 'pegi', 'tvpg']),
  name: Type.String(),
  country: Type.String(),
  media_type: Type.Enum(['general', 'game', 'movie', 'tv']),
  description: Type.String(),
};

const RatingSystem = Type.Object(RatingSystemFields, { $id: 'RatingSystem' });

const RatingSystemWithRatings = Type.Object(
  {
    ...RatingSystemFields,
    ratings: Type.Array(Type.Object({ code: Type.String(), min_age: Type.Integer() }), {
      description: 'least to most restrictive',
    }),
  },
  { $id: 'RatingSystemWithRatings' },
);

export const MaxRatingsSchema = Type.Object(
  {
    csm: Type.String(),
    esrb: Type.String(),
    mpaa: Type.String(),
    pegi: Type.String(),
    tvpg: Type.String(),
  },
  { $id: 'MaxRatings' },
);

export const AgeRatings = Type.Object(
  {
    age: Type.Integer(),
    age_group: Type.Enum(['toddler', 'child', 'preteen', 'teen', 'young_adult']),
    max_ratings: MaxRatingsSchema,
  },
  { $id: 'AgeRatings' },
);

const AGE_MESSAGE = 'age must be between 0 and 99';

const SYSTEMS_JSON = JSON.stringify(
  RATING_SYSTEMS.map(({ ratings: _ratings, ...system }) => system),
);

export function ageRatings(age: number) {
  return { age, age_group: bandForAge(age).group, max_ratings: maxRatingsForAge(age) };
}

export const ratingRoutes: FastifyPluginAsyncTypebox<ProductSurface> = async (app, surface) => {
  // Public on /api/v1 (no credential anywhere); a key with read:ratings on /developer.
  const auth = surface.auth === 'developer' ? ('developer' as const) : ('public' as const);
  const config = { auth, scope: 'read:ratings' as const };

  app.get(
    '/ratings/systems',
    {
      config: {
        ...config,
        errors: surface.auth === 'developer' ? [401, 403] : [],
        staticJson: SYSTEMS_JSON,
      },
      schema: {
        operationId: surface.operationId('listRatingSystems'),
        summary: 'The five rating systems (not paginated)',
        tags: TAGS,
        ...(auth === 'developer' ? { security: surface.security } : {}),
        response: { 200: Type.Array(RatingSystem) },
      },
    },
    async (_request, reply) => sendPreSerialized(reply, SYSTEMS_JSON),
  );

  app.get(
    '/ratings/systems/:systemID',
    {
      config: { ...config, errors: surface.auth === 'developer' ? [401, 403, 404] : [404] },
      schema: {
        operationId: surface.operationId('getRatingSystem'),
        summary: 'One rating system with its ratings, least to most restrictive',
        tags: TAGS,
        ...(auth === 'developer' ? { security: surface.security } : {}),
        params: Type.Object({ systemID: Type.String({ minLength: 1, maxLength: 32 }) }),
        response: { 200: RatingSystemWithRatings },
      },
    },
    async (request) => {
      const system = findRatingSystem(request.params.systemID);
      if (!system) {
        throw new NotFoundError('rating system not found');
      }
      return system;
    },
  );

  app.get(
    '/ratings/by-age',
    {
      config: { ...config, errors: surface.auth === 'developer' ? [401, 403] : [] },
      schema: {
        operationId: surface.operationId('getRatingsByAge'),
        summary: 'The age band and maximum rating per system for an age',
        tags: TAGS,
        ...(auth === 'developer' ? { security: surface.security } : {}),
        querystring: Type.Object({
          age: Type.Integer({ minimum: 0, maximum: 99, 'x-error-message': AGE_MESSAGE }),
        }),
        response: { 200: AgeRatings },
      },
    },
    async (request) => ageRatings(request.query.age),
  );
};
