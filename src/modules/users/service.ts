// Users behind session tokens. The (issuer, subject) -> user mapping never changes, so it is
// cached: a session request costs a signature check, not a database round trip.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SessionClaims } from '../../auth/session-verifier.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../http/errors.js';
import { findUserById, type UserRow, upsertUser } from './store.js';

const CACHED_USERS = 50_000;

export function createUsersService(deps: { db: Db; clock: Clock }) {
  const known = new LRUCache<string, UserRow>({ max: CACHED_USERS });

  return {
    /** The internal user of a verified session, created on first sight. */
    async resolveSessionUser(claims: SessionClaims): Promise<UserRow> {
      const cacheKey = `${claims.issuer}\n${claims.subject}`;
      const cached = known.get(cacheKey);
      if (cached && cached.email === claims.email && cached.name === claims.name) {
        return cached;
      }
      const user = await upsertUser(deps.db, {
        id: randomUUID(),
        issuer: claims.issuer,
        subject: claims.subject,
        email: claims.email,
        name: claims.name,
        created_at: deps.clock.now(),
      });
      known.set(cacheKey, user);
      return user;
    },

    async getUser(id: string): Promise<UserRow> {
      const user = await findUserById(deps.db, id);
      if (!user) {
        throw new NotFoundError('user not found');
      }
      return user;
    },

    async userExists(id: string): Promise<boolean> {
      return (await findUserById(deps.db, id)) !== undefined;
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
