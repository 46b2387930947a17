// Families, seen through the caller: a user (session, sandbox session or MCP token) sees the
// families it belongs to, an API key sees its org's families of its environment.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import { BadRequestError, ForbiddenError } from '../../http/errors.js';
import {
  type FamilyRow,
  type FamilyTenant,
  findMembership,
  insertFamily,
  listFamilies,
} from './store.js';

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

export function createFamiliesService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
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

    listFamilies: (principal: Principal) => listFamilies(db, tenantOf(principal)),

    /** Whether a user belongs to a family (MCP tokens may only be bound to such families). */
    async isMember(userId: string, familyId: string): Promise<boolean> {
      return (await findMembership(db, familyId, userId)) !== undefined;
    },
  };
}

export type FamiliesService = ReturnType<typeof createFamiliesService>;
