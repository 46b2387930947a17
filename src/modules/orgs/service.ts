// Developer orgs and their members: who may see an org (members; others get 404) and who may
// change it (owners and admins; others get 403).
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { randomBase62 } from '../../auth/secrets.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
} from '../../http/errors.js';
import type { UsersService } from '../users/service.js';
import {
  deleteMemberKeepingOwner,
  findMember,
  findOrg,
  insertMember,
  insertOrgWithOwner,
  listMembers,
  listOrgsOfUser,
  type OrgMemberRow,
  type OrgRole,
  type OrgRow,
  updateOrgTier,
} from './store.js';

export const ORG_NOT_FOUND = 'developer org not found';
const INSUFFICIENT_ROLE = 'insufficient role for this action';
const MANAGERS: readonly OrgRole[] = ['owner', 'admin'];

/** Default per-minute limits of the plans (CONTRACT.md §3); other tiers name their own. */
export const TIER_RPM: Record<string, number> = { free: 100, pro: 1000, accredited: 1000 };

export interface CreateOrgInput {
  name: string;
  description?: string;
  website_url?: string;
}

/** "Acme Parental Controls!" -> "acme-parental-controls" (ASCII, at most 40 characters). */
export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return base === '' ? 'org' : base;
}

function checkWebsiteUrl(url: string): void {
  if (url === '') {
    return;
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') {
      return;
    }
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError('website_url must be an absolute http(s) URL');
}

/** set-tier must reach running servers within 5 s (CONTRACT.md §1). */
const LIMIT_CACHE_MS = 5_000;

export function createOrgsService(deps: { db: Db; clock: Clock; users: UsersService }) {
  const { db, clock } = deps;
  const limits = new LRUCache<string, number>({
    max: 10_000,
    ttl: LIMIT_CACHE_MS,
    perf: { now: () => clock.now().getTime() },
  });

  async function requireMember(orgId: string, userId: string): Promise<OrgMemberRow> {
    const member = await findMember(db, orgId, userId);
    if (!member) {
      throw new NotFoundError(ORG_NOT_FOUND);
    }
    return member;
  }

  async function requireManager(orgId: string, userId: string): Promise<OrgMemberRow> {
    const member = await requireMember(orgId, userId);
    if (!MANAGERS.includes(member.role)) {
      throw new ForbiddenError(INSUFFICIENT_ROLE);
    }
    return member;
  }

  return {
    requireMember,
    requireManager,

    async createOrg(userId: string, input: CreateOrgInput): Promise<OrgRow> {
      const name = input.name.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      const websiteUrl = input.website_url?.trim() ?? '';
      checkWebsiteUrl(websiteUrl);
      const now = clock.now();
      const org: OrgRow = {
        id: randomUUID(),
        name,
        slug: `${slugify(name)}-${randomBase62(6).toLowerCase()}`,
        description: input.description?.trim() ?? '',
        website_url: websiteUrl,
        logo_url: '',
        owner_user_id: userId,
        tier: 'free',
        rate_limit_rpm: TIER_RPM.free ?? 100,
        created_at: now,
        updated_at: now,
      };
      try {
        await insertOrgWithOwner(db, org, {
          id: randomUUID(),
          org_id: org.id,
          user_id: userId,
          role: 'owner',
          created_at: now,
        });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConflictError(
            `org slug "${org.slug}" is already taken; retry the request to draw a new suffix`,
          );
        }
        throw error;
      }
      return org;
    },

    listOrgs: (userId: string) => listOrgsOfUser(db, userId),

    /** The org's per-minute limit, read at most every 5 s per org (hot path of metering). */
    /** From memory when known (every request of a keyed caller asks): no promise then. */
    rateLimitOf(orgId: string): number | Promise<number> {
      const cached = limits.get(orgId);
      if (cached !== undefined) {
        return cached;
      }
      return findOrg(db, orgId).then((org) => {
        const limit = org?.rate_limit_rpm ?? TIER_RPM.free ?? 100;
        limits.set(orgId, limit);
        return limit;
      });
    },

    async getOrg(userId: string, orgId: string): Promise<OrgRow> {
      await requireMember(orgId, userId);
      const org = await findOrg(db, orgId);
      if (!org) {
        throw new NotFoundError(ORG_NOT_FOUND);
      }
      return org;
    },

    async listMembers(userId: string, orgId: string): Promise<OrgMemberRow[]> {
      await requireMember(orgId, userId);
      return listMembers(db, orgId);
    },

    async addMember(
      actorId: string,
      orgId: string,
      input: { user_id: string; role: OrgRole },
    ): Promise<OrgMemberRow> {
      const actor = await requireManager(orgId, actorId);
      if (input.role === 'owner' && actor.role !== 'owner') {
        throw new ForbiddenError('only an owner can add an owner');
      }
      if (!(await deps.users.userExists(input.user_id))) {
        throw new NotFoundError('user not found');
      }
      const member: OrgMemberRow = {
        id: randomUUID(),
        org_id: orgId,
        user_id: input.user_id,
        role: input.role,
        created_at: clock.now(),
      };
      if (!(await insertMember(db, member))) {
        throw new ConflictError('user is already a member of this org');
      }
      return member;
    },

    async removeMember(actorId: string, orgId: string, userId: string): Promise<void> {
      const actor = await requireMember(orgId, actorId);
      if (actorId !== userId) {
        if (!MANAGERS.includes(actor.role)) {
          throw new ForbiddenError(INSUFFICIENT_ROLE);
        }
        const target = await findMember(db, orgId, userId);
        if (target?.role === 'owner' && actor.role !== 'owner') {
          throw new ForbiddenError('only an owner can remove an owner');
        }
      }
      const outcome = await deleteMemberKeepingOwner(db, orgId, userId);
      if (outcome === 'not_found') {
        throw new NotFoundError('member not found');
      }
      if (outcome === 'last_owner') {
        throw new ConflictError('an org must keep at least one owner');
      }
    },

    /** Operator path (`npm run admin -- set-tier`): no caller, no membership check. */
    async setTier(orgId: string, tier: string, rateLimitRpm?: number): Promise<OrgRow> {
      const rpm = rateLimitRpm ?? TIER_RPM[tier];
      if (rpm === undefined) {
        throw new BadRequestError(`tier "${tier}" has no default limit: give the rpm`);
      }
      if (!Number.isInteger(rpm) || rpm < 1) {
        throw new BadRequestError('rpm must be a positive integer');
      }
      const org = await updateOrgTier(db, orgId, tier, rpm, clock.now());
      if (!org) {
        throw new NotFoundError(ORG_NOT_FOUND);
      }
      return org;
    },
  };
}

export type OrgsService = ReturnType<typeof createOrgsService>;
