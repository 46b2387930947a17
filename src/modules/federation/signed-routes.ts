// The two signed OCSS routes (CONTRACT.md §9): POST /api/v1/csm/reviews/bulk (any active
// entry) and PATCH /api/v1/platforms/{did}/connect (the platform itself, verified tier).
// Every failure carries its `class`; idempotency works by header or body `idempotency_key`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LRUCache } from 'lru-cache';
import { Type } from 'typebox';
import type { Clock } from '../../clock.js';
import type { AppEnv } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';
import { replayKeptBody } from '../../http/kept-body.js';
import { OcssError } from '../../ocss/ocss-error.js';
import { bulkReviews, MAX_SLUGS } from '../csm/reviews-service.js';
import type { ProvidersService } from '../providers/service.js';
import { findOrgAdvisorByDid } from './advisors-store.js';
import type { SignatureGuard } from './signature-guard.js';
import type { PublishedEntry } from './trust-list-service.js';

const TAGS = ['OCSS federation'];
const SIGNED = 'Signed with RFC 9421 (Ed25519, keyid = a trust-list key_id); errors carry `class`.';

const Review = Type.Object(
  {
    slug: Type.String(),
    title: Type.String(),
    media_type: Type.Enum(['movie', 'tv', 'game', 'app', 'book']),
    age_rating: Type.String(),
    age_range_min: Type.Integer(),
    quality_stars: Type.Integer({ minimum: 1, maximum: 5 }),
    is_family_friendly: Type.Boolean(),
    parent_summary: Type.String(),
    descriptors: Type.Array(Type.String()),
  },
  { $id: 'CsmReview' },
);

/** The bulk body's bounds, read by its schema and by the fast path's check alike. */
const MAX_SLUG_LENGTH = 200;
const MAX_CURSOR_LENGTH = 1024;

const BulkReviewsBody = Type.Object({
  slugs: Type.Array(Type.String({ minLength: 1, maxLength: MAX_SLUG_LENGTH }), {
    maxItems: MAX_SLUGS,
    description: '[] pages through the whole catalog',
  }),
  cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_LENGTH, description: '"" to start' })),
  idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  family_id: Type.Optional(
    Uuid('required of a family-scoped advisor: the family it advises (else 403 scope)'),
  ),
});

const HttpUrl = Type.String({ minLength: 1, maxLength: 2048 });

const ConnectBody = Type.Object({
  name: Name(),
  authorize_url: HttpUrl,
  token_url: HttpUrl,
  profiles_url: HttpUrl,
  scopes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20 }),
});

const DirectoryRow = Type.Object(
  {
    did: Type.String(),
    name: Type.String(),
    authorize_url: Type.String(),
    token_url: Type.String(),
    profiles_url: Type.String(),
    scopes: Type.Array(Type.String()),
    updated_at: DateTime(),
  },
  { $id: 'ProviderDirectoryRow' },
);

type AdvisorScope = { scope: 'family' | 'global'; scope_family_id: string | null } | null;

/**
 * A family-scoped advisor acts for its one family only. An advisor's scope never changes
 * and a DID is registered once, so the answer (including "not an org advisor") is cached.
 */
function createScopeCheck(db: Db) {
  const scopes = new LRUCache<string, { value: AdvisorScope }>({ max: 10_000 });
  return {
    async check(signer: PublishedEntry, familyId: string | undefined): Promise<void> {
      let cached = scopes.get(signer.did);
      if (!cached) {
        let advisor: AdvisorScope | undefined;
        try {
          advisor = await findOrgAdvisorByDid(db, signer.did);
        } catch {
          throw OcssError.unavailable('the advisor registry cannot be read right now');
        }
        cached = { value: advisor ?? null };
        scopes.set(signer.did, cached);
      }
      const advisor = cached.value;
      if (advisor?.scope === 'family' && advisor.scope_family_id !== familyId) {
        throw OcssError.standingFailure('scope', `${signer.did} advises one family only`);
      }
    },
    /** Whether `did` is known, without a read, to act without naming a family. */
    knownUnscoped(did: string): boolean {
      const cached = scopes.get(did);
      return cached !== undefined && cached.value?.scope !== 'family';
    },
  };
}

const BULK_BODY_KEYS = new Set(['slugs', 'cursor']);

/**
 * A bulk read's body the route would take as it is, naming no family and no idempotency
 * key: the fast path answers only these (signed-read-fast-path.ts), the route the rest.
 */
function isPlainBulkBody(body: unknown): body is { slugs: string[]; cursor?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return false;
  }
  for (const key of Object.keys(body)) {
    if (!BULK_BODY_KEYS.has(key)) {
      return false;
    }
  }
  const { slugs, cursor } = body as { slugs?: unknown; cursor?: unknown };
  return (
    Array.isArray(slugs) &&
    slugs.length <= MAX_SLUGS &&
    slugs.every(
      (slug) => typeof slug === 'string' && slug.length >= 1 && slug.length <= MAX_SLUG_LENGTH,
    ) &&
    (cursor === undefined || (typeof cursor === 'string' && cursor.length <= MAX_CURSOR_LENGTH))
  );
}

export function signedRoutes(deps: {
  db: Db;
  clock: Clock;
  appEnv: AppEnv;
  guard: SignatureGuard;
  providers: Pick<ProvidersService, 'publish'>;
}): FastifyPluginAsyncTypebox {
  const schemes = deps.appEnv === 'sandbox' ? ['https:', 'http:'] : ['https:'];
  const checkUrl = (field: string, value: string) => {
    let protocol: string | undefined;
    try {
      protocol = new URL(value).protocol;
    } catch {
      protocol = undefined;
    }
    if (!protocol || !schemes.includes(protocol)) {
      throw OcssError.malformed(
        `${field} must be an absolute ${deps.appEnv === 'sandbox' ? 'http(s)' : 'https'} URL`,
      );
    }
  };

  const checkScope = createScopeCheck(deps.db);
  return async (app) => {
    app.decorateRequest('ocssSigner', null);
    const signer = (request: { ocssSigner: PublishedEntry | null }) =>
      request.ocssSigner as PublishedEntry;

    app.post(
      '/api/v1/csm/reviews/bulk',
      {
        config: {
          auth: 'public',
          ocss: { bodyIdempotencyKey: true },
          errors: [401, 403, 409],
          // Its unscoped 200s, ahead of the router (signed-read-fast-path.ts); a page comes
          // from the static catalog, and a bad slug or cursor is left to the route.
          signedRead: (signer, body) => {
            if (!isPlainBulkBody(body) || !checkScope.knownUnscoped(signer.did)) {
              return undefined;
            }
            try {
              return bulkReviews({ slugs: body.slugs, cursor: body.cursor ?? '' });
            } catch {
              return undefined;
            }
          },
        },
        // A request the fast path read and left here arrives with its body kept.
        preParsing: replayKeptBody,
        preValidation: deps.guard,
        schema: {
          operationId: 'bulkCsmReviews',
          summary: 'Reviews of the sandbox catalog, 25 a page (signed)',
          description: SIGNED,
          tags: TAGS,
          body: BulkReviewsBody,
          response: {
            200: Type.Object({
              reviews: Type.Array(Review),
              next_cursor: Type.Union([Type.String(), Type.Null()], {
                description: 'null on the last page',
              }),
            }),
          },
        },
      },
      async (request) => {
        await checkScope.check(signer(request), request.body.family_id);
        return bulkReviews({ slugs: request.body.slugs, cursor: request.body.cursor ?? '' });
      },
    );

    app.patch(
      '/api/v1/platforms/:did/connect',
      {
        config: { auth: 'public', ocss: {}, errors: [401, 403, 409] },
        preValidation: deps.guard,
        schema: {
          operationId: 'publishPlatformConnect',
          summary: 'A platform publishes its connect config (signed by that platform, verified)',
          description: SIGNED,
          tags: TAGS,
          params: Type.Object({ did: Type.String({ maxLength: 200 }) }),
          body: ConnectBody,
          response: { 200: DirectoryRow },
        },
      },
      async (request) => {
        const entry = signer(request);
        if (entry.did !== request.params.did) {
          throw OcssError.standingFailure(
            'authority_binding',
            `the signer is not ${request.params.did}`,
          );
        }
        if (entry.tier !== 'verified') {
          throw OcssError.standingFailure(
            'band_exceeds_tier',
            'publishing a connect config needs a verified entry',
          );
        }
        const { name, authorize_url, token_url, profiles_url, scopes } = request.body;
        for (const [field, value] of Object.entries({ authorize_url, token_url, profiles_url })) {
          checkUrl(field, value);
        }
        return deps.providers.publish(
          entry.did,
          { name: name.trim(), authorize_url, token_url, profiles_url, scopes },
          deps.clock.now(),
        );
      },
    );
  };
}
