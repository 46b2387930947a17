// Developer orgs and their members: who may see an org (members; others get 404) and who may
// change it (owners and admins; others get 403). Each change states its one entry on the
// org's audit chain (CONTRACT.md §12.1), the org's creation being the chain's first.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SessionPrincipal } from '../../auth/principal.js';
import { randomBase62 } from '../../auth/secrets.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
} from '../../http/errors.js';
import { actorOf, systemActor } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
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

/**
 * An org's free text and its URL may say who runs it: named, never valued, in its audit
 * entries. Its name is the developer's label for it (the slug shows it), kept like a key's.
 */
const ORG_PERSONAL_FIELDS = ['description', 'website_url'] as const;

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

export function createOrgsService(deps: {
  db: Db;
  clock: Clock;
  users: UsersService;
  writes: ChangeRunner;
}) {
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

    async createOrg(caller: SessionPrincipal, input: CreateOrgInput): Promise<OrgRow> {
      const { userId } = caller;
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
        await deps.writes.run(async (change) => {
          await insertOrgWithOwner(change.trx, org, {
            id: randomUUID(),
            org_id: org.id,
            user_id: userId,
            role: 'owner',
            created_at: now,
          });
          change.audit({
            orgId: org.id,
            actor: actorOf(caller),
            action: 'org.created',
            target: { type: 'org', id: org.id },
            changes: auditChanges(
              {
                name: org.name,
                slug: org.slug,
                description: input.description,
                website_url: input.website_url,
                tier: org.tier,
                rate_limit_rpm: org.rate_limit_rpm,
              },
              ORG_PERSONAL_FIELDS,
            ),
          });
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
      caller: SessionPrincipal,
      orgId: string,
      input: { user_id: string; role: OrgRole },
    ): Promise<OrgMemberRow> {
      const actor = await requireManager(orgId, caller.userId);
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
      await deps.writes.run(async (change) => {
        if (!(await insertMember(change.trx, member))) {
          throw new ConflictError('user is already a member of this org');
        }
        change.audit({
          orgId,
          actor: actorOf(caller),
          action: 'org_member.added',
          target: { type: 'user', id: member.user_id },
          changes: { role: member.role },
        });
      });
      return member;
    },

    async removeMember(caller: SessionPrincipal, orgId: string, userId: string): Promise<void> {
      const actor = await requireMember(orgId, caller.userId);
      if (caller.userId !== userId) {
        if (!MANAGERS.includes(actor.role)) {
          throw new ForbiddenError(INSUFFICIENT_ROLE);
        }
        const target = await findMember(db, orgId, userId);
        if (target?.role === 'owner' && actor.role !== 'owner') {
          throw new ForbiddenError('only an owner can remove an owner');
        }
      }
      const outcome = await deps.writes.run(async (change) => {
        const removed = await deleteMemberKeepingOwner(change.trx, orgId, userId);
        if (removed === 'deleted') {
          change.audit({
            orgId,
            // A member who leaves is no member when the entry is written: the role it acted
            // in is stated rather than looked up.
            actor: { ...actorOf(caller), label: actor.role },
            action: 'org_member.removed',
            target: { type: 'user', id: userId },
            changes: {},
          });
        }
        return removed;
      });
      if (outcome === 'not_found') {
        throw new NotFoundError('member not found');
      }
      if (outcome === 'last_owner') {
        throw new ConflictError('an org must keep at least one owner');
      }
    },

    /**
     * Operator path (`npm run admin -- set-tier`): no caller, no membership check; its entry
     * names the operator as the actor.
     */
    async setTier(orgId: string, tier: string, rateLimitRpm?: number): Promise<OrgRow> {
      const rpm = rateLimitRpm ?? TIER_RPM[tier];
      if (rpm === undefined) {
        throw new BadRequestError(`tier "${tier}" has no default limit: give the rpm`);
      }
      if (!Number.isInteger(rpm) || rpm < 1) {
        throw new BadRequestError('rpm must be a positive integer');
      }
      return deps.writes.run(async (change) => {
        const org = await updateOrgTier(change.trx, orgId, tier, rpm, clock.now());
        if (!org) {
          throw new NotFoundError(ORG_NOT_FOUND);
        }
        change.audit({
          orgId,
          actor: systemActor('operator'),
          action: 'org.tier_changed',
          target: { type: 'org', id: orgId },
          changes: { tier: org.tier, rate_limit_rpm: org.rate_limit_rpm },
        });
        return org;
      });
    },
  };
}

export type OrgsService = ReturnType<typeof createOrgsService>;
