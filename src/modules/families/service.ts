// Families, seen through the caller: a user (session, sandbox session or MCP token) sees the
// families it belongs to, an API key sees its org's families of its environment.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
} from '../../http/errors.js';
import { type AuditActor, actorOf } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';
import type { TestClocksService } from '../test-clocks/service.js';
import type { UsersService } from '../users/service.js';
import {
  type Alongside,
  changeMemberKeepingOwner,
  type FamilyFacts,
  type FamilyMemberTable,
  type FamilyRole,
  type FamilyRow,
  type FamilyTenant,
  findFamily,
  findFamilyRead,
  findMembership,
  insertFamily,
  insertMember,
  listFamilies,
  listMembersRead,
  renameFamily,
  withoutFacts,
} from './store.js';

export const FAMILY_NOT_FOUND = 'family not found';
const NOT_A_MEMBER = 'not a member of this family';
const INSUFFICIENT_ROLE = 'insufficient role for this action';
const LAST_OWNER = 'a family must keep at least one owner';
const WRITERS: readonly FamilyRole[] = ['owner', 'parent'];
/** A family's personal data: the audit log names these fields without their values. */
const FAMILY_PERSONAL_FIELDS = ['name'] as const;

/**
 * Who changed a membership: only an owner may, so a person acted as `owner` (named so even
 * when the change took that role away or removed them: the label says who acted, not what
 * they are afterwards).
 */
function memberChangeActor(principal: Principal): AuditActor {
  const actor = actorOf(principal);
  return actor.type === 'user' && actor.label === undefined ? { ...actor, label: 'owner' } : actor;
}

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
  /** Sandbox test clocks a family may join (CONTRACT.md §11.3). */
  testClocks: Pick<TestClocksService, 'requireClock' | 'attachFamily'>;
  writes: ChangeRunner;
}) {
  const { db, clock } = deps;

  /**
   * Whether the caller sees the sandbox demo family. An MCP token's one family is all it
   * sees: a token bound to the demo family sees it, a token bound to any other does not (it
   * must not learn that anything outside its family exists).
   */
  function seesDemo(principal: Principal): boolean {
    return deps.sandbox && (principal.kind !== 'mcp' || principal.familyId === DEMO_FAMILY_ID);
  }

  /** The demo family: readable by every sandbox caller that sees it, writable by none. */
  function demoAccess(principal: Principal, access: Access): boolean {
    if (!seesDemo(principal)) {
      return false;
    }
    if (access === 'write') {
      throw new ForbiddenError('demo family is read-only');
    }
    return true;
  }

  /**
   * Whether the caller may act on a family, from its facts (`undefined`: no such family). A
   * key sees its org's families of its environment and an MCP token its one family: anything
   * else is 404, as if it did not exist. A user who is not a member of an existing family
   * gets 403 (spec: "403 when the caller is not a member of the family"); writes need an
   * owner or parent (some, `roles`, only an owner). Throws; returns nothing.
   */
  function checkFamily(
    principal: Principal,
    facts: FamilyFacts | undefined,
    access: Access,
    roles: readonly FamilyRole[] = WRITERS,
  ): void {
    if (!facts) {
      throw new NotFoundError(FAMILY_NOT_FOUND);
    }
    if (facts.vis_family_id === DEMO_FAMILY_ID && demoAccess(principal, access)) {
      return;
    }
    if (principal.kind === 'key') {
      if (facts.vis_org_id !== principal.orgId || facts.vis_environment !== principal.environment) {
        throw new NotFoundError(FAMILY_NOT_FOUND);
      }
      return;
    }
    if (principal.kind === 'mcp' && principal.familyId !== facts.vis_family_id) {
      throw new NotFoundError(FAMILY_NOT_FOUND);
    }
    if (!facts.vis_role) {
      throw new ForbiddenError(NOT_A_MEMBER);
    }
    if (access === 'write' && !roles.includes(facts.vis_role)) {
      throw new ForbiddenError(INSUFFICIENT_ROLE);
    }
  }

  /**
   * `checkFamily` for a resource reached through its family (a child, a policy, a webhook):
   * when the family is hidden, the resource itself does not exist for the caller (404
   * `notFound`, never the family's message); with `hideForbidden`, a 403 is a 404 as well.
   */
  function checkThrough(
    principal: Principal,
    facts: FamilyFacts | undefined,
    notFound: string,
    options: { access?: Access; hideForbidden?: boolean } = {},
  ): void {
    if (!facts) {
      throw new NotFoundError(notFound);
    }
    try {
      checkFamily(principal, facts, options.access ?? 'read');
    } catch (error) {
      if (
        error instanceof NotFoundError ||
        (options.hideForbidden === true && error instanceof ForbiddenError)
      ) {
        throw new NotFoundError(notFound);
      }
      throw error;
    }
  }

  /**
   * The rows of a list read made with `withRows` (one statement), if the caller sees their
   * anchor; `key` is a column never null in a real row. An absent or hidden anchor is 404
   * `notFound` (the family's own message when the anchor is the family).
   */
  function visibleRows<R>(
    principal: Principal,
    result: Alongside<R>[],
    key: keyof R,
    notFound: string = FAMILY_NOT_FOUND,
  ): R[] {
    return presentVisibleRows(principal, result, key, (row) => withoutFacts(row) as R, notFound);
  }

  /**
   * The same, each row handed to `present` as read (its family's facts still on it, which
   * `present` leaves out): one pass and one array, on the hot list reads.
   */
  function presentVisibleRows<R, P>(
    principal: Principal,
    result: Alongside<R>[],
    key: keyof R,
    present: (row: Alongside<R>) => P,
    notFound: string = FAMILY_NOT_FOUND,
  ): P[] {
    checkThrough(principal, result[0], notFound);
    const rows: P[] = [];
    for (const row of result) {
      if (row[key] !== null) {
        rows.push(present(row));
      }
    }
    return rows;
  }

  /** The family, if the caller may act on it (see `checkFamily`): one statement. */
  async function requireFamily(
    principal: Principal,
    familyId: string,
    access: Access,
    roles: readonly FamilyRole[] = WRITERS,
  ): Promise<FamilyRow> {
    const row = await findFamilyRead(db, familyId, tenantOf(principal));
    checkFamily(principal, row, access, roles);
    return withoutFacts(row as FamilyRow & FamilyFacts);
  }

  return {
    async createFamily(
      principal: Principal,
      input: { name: string; test_clock_id?: string | null },
    ): Promise<FamilyRow> {
      const name = input.name.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      if (principal.kind === 'mcp') {
        throw new ForbiddenError('an MCP token acts for its one family only');
      }
      const testClock = input.test_clock_id
        ? await deps.testClocks.requireClock(principal, input.test_clock_id)
        : undefined;
      // A family made on a test clock is made at the clock's time.
      const now = testClock ? new Date(testClock.frozen_time) : clock.now();
      const family: FamilyRow = {
        id: randomUUID(),
        name,
        org_id: principal.kind === 'key' ? principal.orgId : null,
        environment: principal.kind === 'key' ? principal.environment : 'test',
        test_clock_id: testClock?.id ?? null,
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
      await deps.writes.run(async (change) => {
        await insertFamily(change.trx, family, owner);
        change.audit({
          familyId: family.id,
          actor: actorOf(principal),
          action: 'family.created',
          target: { type: 'family', id: family.id },
          // Joining a test clock is a setting of the family; its name is personal.
          changes: auditChanges(
            { name, test_clock_id: input.test_clock_id },
            FAMILY_PERSONAL_FIELDS,
          ),
        });
      });
      return family;
    },

    async listFamilies(principal: Principal): Promise<FamilyRow[]> {
      const own = await listFamilies(db, tenantOf(principal));
      if (!seesDemo(principal)) {
        return own;
      }
      // The demo family is the oldest: it comes last in a newest-first list.
      const demo = await findFamily(db, DEMO_FAMILY_ID);
      return demo ? [...own.filter((f) => f.id !== DEMO_FAMILY_ID), demo] : own;
    },

    requireFamily,
    checkFamily,
    checkThrough,
    visibleRows,
    presentVisibleRows,

    getFamily: (principal: Principal, familyId: string) =>
      requireFamily(principal, familyId, 'read'),

    /** Renames the family and/or moves it to a test clock (null: back to the real clock). */
    async updateFamily(
      principal: Principal,
      familyId: string,
      input: { name?: string; test_clock_id?: string | null },
    ) {
      const current = await requireFamily(principal, familyId, 'write');
      const name = input.name?.trim();
      if (name === '') {
        throw new BadRequestError('name is required');
      }
      return deps.writes.run(async (change) => {
        if (input.test_clock_id !== undefined && input.test_clock_id !== current.test_clock_id) {
          await deps.testClocks.attachFamily(principal, change.trx, familyId, input.test_clock_id);
        }
        const family = await renameFamily(change.trx, familyId, name ?? current.name, clock.now());
        change.audit({
          familyId,
          actor: actorOf(principal),
          action: 'family.updated',
          target: { type: 'family', id: familyId },
          changes: auditChanges(
            { name: input.name, test_clock_id: input.test_clock_id },
            FAMILY_PERSONAL_FIELDS,
          ),
        });
        return family;
      });
    },

    async listMembers(principal: Principal, familyId: string): Promise<FamilyMemberTable[]> {
      const result = await listMembersRead(db, familyId, tenantOf(principal));
      return visibleRows(principal, result, 'id');
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
      await deps.writes.run(async (change) => {
        if (!(await insertMember(change.trx, member))) {
          throw new ConflictError('user is already a member of this family');
        }
        change.audit({
          familyId,
          actor: memberChangeActor(principal),
          action: 'family_member.added',
          target: { type: 'user', id: member.user_id },
          changes: { role: member.role },
        });
      });
      return member;
    },

    async changeMember(
      principal: Principal,
      familyId: string,
      memberId: string,
      change: { role: FamilyRole } | 'delete',
    ): Promise<FamilyMemberTable | undefined> {
      await requireFamily(principal, familyId, 'write', ['owner']);
      return deps.writes.run(async (write) => {
        const outcome = await changeMemberKeepingOwner(write.trx, familyId, memberId, change);
        if (outcome === 'not_found') {
          throw new NotFoundError('member not found');
        }
        if (outcome === 'last_owner') {
          throw new ConflictError(LAST_OWNER);
        }
        const member = 'deleted' in outcome ? outcome.deleted : outcome.changed;
        write.audit({
          familyId,
          actor: memberChangeActor(principal),
          action: 'deleted' in outcome ? 'family_member.removed' : 'family_member.updated',
          target: { type: 'user', id: member.user_id },
          changes: 'deleted' in outcome ? {} : { role: member.role },
        });
        return 'deleted' in outcome ? undefined : outcome.changed;
      });
    },

    /**
     * Whether a user may bind an MCP token to a family: one it belongs to, or the sandbox's
     * demo family, so that an assistant can be tried on seeded data with nothing created
     * first. The token then acts as its user does there: it reads, and every write is 403.
     */
    async mayBindMcpToken(userId: string, familyId: string): Promise<boolean> {
      if (deps.sandbox && familyId === DEMO_FAMILY_ID) {
        return true;
      }
      return (await findMembership(db, familyId, userId)) !== undefined;
    },
  };
}

export type FamiliesService = ReturnType<typeof createFamiliesService>;
