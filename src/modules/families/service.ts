// Families, seen through the caller: a user (session, sandbox session or MCP token) sees the
// families it belongs to, an API key sees its org's families of its environment.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
} from '../../http/errors.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import type { UsersService } from '../users/service.js';
import {
  changeMemberKeepingOwner,
  deleteFamily,
  type FamilyMemberTable,
  type FamilyRole,
  type FamilyRow,
  type FamilyTenant,
  findFamily,
  findMembership,
  insertFamily,
  insertMember,
  listFamilies,
  listMembers,
  renameFamily,
} from './store.js';

export const FAMILY_NOT_FOUND = 'family not found';
const NOT_A_MEMBER = 'not a member of this family';
const INSUFFICIENT_ROLE = 'insufficient role for this action';
const LAST_OWNER = 'a family must keep at least one owner';
const WRITERS: readonly FamilyRole[] = ['owner', 'parent'];

export type Access = 'read' | 'write';

export function tenantOf(principal: Principal): FamilyTenant {
  switch (principal.kind) {
    case 'key':
      return { kind: 'org', orgId: principal.orgId, environment: principal.environment };
    case 'mcp':
      return { kind: 'user', userId: principal.userId, onlyFamilyId: principal.familyId };
    case 'user':
    case 'sandbox':
      return { kind: 'user', userId: principal.userId };
  }
}

export function createFamiliesService(deps: {
  db: Db;
  clock: Clock;
  users: Pick<UsersService, 'userExists'>;
  /** On a sandbox deployment every caller may read the demo family (CONTRACT.md §6). */
  sandbox: boolean;
  /** A deleted family takes its children's policies along: cached versions must go too. */
  policyChanges: Pick<PolicyChanges, 'family'>;
}) {
  const { db, clock } = deps;

  /** The demo family: readable by every sandbox caller (but MCP tokens), writable by none. */
  function demoAccess(principal: Principal, access: Access): boolean {
    if (!deps.sandbox || principal.kind === 'mcp') {
      return false;
    }
    if (access === 'write') {
      throw new ForbiddenError('demo family is read-only');
    }
    return true;
  }

  /**
   * The family, if the caller may act on it. A key sees its org's families of its environment
   * and an MCP token its one family: anything else is 404, as if it did not exist. A user who
   * is not a member of an existing family gets 403 (spec: "403 when the caller is not a member
   * of the family"); writes need an owner or parent (some, `roles`, only an owner).
   */
  async function requireFamily(
    principal: Principal,
    familyId: string,
    access: Access,
    roles: readonly FamilyRole[] = WRITERS,
  ): Promise<FamilyRow> {
    const family = await findFamily(db, familyId);
    if (!family) {
      throw new NotFoundError(FAMILY_NOT_FOUND);
    }
    if (family.id === DEMO_FAMILY_ID && demoAccess(principal, access)) {
      return family;
    }
    if (principal.kind === 'key') {
      if (family.org_id !== principal.orgId || family.environment !== principal.environment) {
        throw new NotFoundError(FAMILY_NOT_FOUND);
      }
      return family;
    }
    if (principal.kind === 'mcp' && principal.familyId !== familyId) {
      throw new NotFoundError(FAMILY_NOT_FOUND);
    }
    const membership = await findMembership(db, familyId, principal.userId);
    if (!membership) {
      throw new ForbiddenError(NOT_A_MEMBER);
    }
    if (access === 'write' && !roles.includes(membership.role)) {
      throw new ForbiddenError(INSUFFICIENT_ROLE);
    }
    return family;
  }

  return {
    async createFamily(principal: Principal, input: { name: string }): Promise<FamilyRow> {
      const name = input.name.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      if (principal.kind === 'mcp') {
        throw new ForbiddenError('an MCP token acts for its one family only');
      }
      const now = clock.now();
      const family: FamilyRow = {
        id: randomUUID(),
        name,
        org_id: principal.kind === 'key' ? principal.orgId : null,
        environment: principal.kind === 'key' ? principal.environment : 'test',
        created_at: now,
        updated_at: now,
      };
      const owner =
        principal.kind === 'key'
          ? undefined
          : {
              id: randomUUID(),
              family_id: family.id,
              user_id: principal.userId,
              role: 'owner' as const,
              joined_at: now,
            };
      await insertFamily(db, family, owner);
      return family;
    },

    async listFamilies(principal: Principal): Promise<FamilyRow[]> {
      const own = await listFamilies(db, tenantOf(principal));
      if (!deps.sandbox || principal.kind === 'mcp') {
        return own;
      }
      // The demo family is the oldest: it comes last in a newest-first list.
      const demo = await findFamily(db, DEMO_FAMILY_ID);
      return demo ? [...own.filter((f) => f.id !== DEMO_FAMILY_ID), demo] : own;
    },

    requireFamily,

    getFamily: (principal: Principal, familyId: string) =>
      requireFamily(principal, familyId, 'read'),

    async renameFamily(principal: Principal, familyId: string, input: { name: string }) {
      await requireFamily(principal, familyId, 'write');
      const name = input.name.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      return renameFamily(db, familyId, name, clock.now());
    },

    async deleteFamily(principal: Principal, familyId: string): Promise<void> {
      await requireFamily(principal, familyId, 'write', ['owner']);
      await deleteFamily(db, familyId);
      await deps.policyChanges.family(familyId);
    },

    async listMembers(principal: Principal, familyId: string): Promise<FamilyMemberTable[]> {
      await requireFamily(principal, familyId, 'read');
      return listMembers(db, familyId);
    },

    async addMember(
      principal: Principal,
      familyId: string,
      input: { user_id: string; role: FamilyRole },
    ): Promise<FamilyMemberTable> {
      await requireFamily(principal, familyId, 'write', ['owner']);
      if (!(await deps.users.userExists(input.user_id))) {
        throw new NotFoundError('user not found');
      }
      const member: FamilyMemberTable = {
        id: randomUUID(),
        family_id: familyId,
        user_id: input.user_id,
        role: input.role,
        joined_at: clock.now(),
      };
      if (!(await insertMember(db, member))) {
        throw new ConflictError('user is already a member of this family');
      }
      return member;
    },

    async changeMember(
      principal: Principal,
      familyId: string,
      memberId: string,
      change: { role: FamilyRole } | 'delete',
    ): Promise<FamilyMemberTable | undefined> {
      await requireFamily(principal, familyId, 'write', ['owner']);
      const outcome = await changeMemberKeepingOwner(db, familyId, memberId, change);
      if (outcome === 'not_found') {
        throw new NotFoundError('member not found');
      }
      if (outcome === 'last_owner') {
        throw new ConflictError(LAST_OWNER);
      }
      return outcome === 'deleted' ? undefined : outcome;
    },

    /** Whether a user belongs to a family (MCP tokens may only be bound to such families). */
    async isMember(userId: string, familyId: string): Promise<boolean> {
      return (await findMembership(db, familyId, userId)) !== undefined;
    },
  };
}

export type FamiliesService = ReturnType<typeof createFamiliesService>;
