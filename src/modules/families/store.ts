// SQL of families and their members. Which families a caller sees is decided by the service
// and expressed here as a tenant filter.

import type { Environment } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    families: FamilyTable;
    family_members: FamilyMemberTable;
  }
}

export type FamilyRole = 'owner' | 'parent' | 'guardian';

export interface FamilyTable {
  id: string;
  name: string;
  org_id: string | null;
  environment: Environment;
  created_at: Date;
  updated_at: Date;
}

export interface FamilyMemberTable {
  id: string;
  family_id: string;
  user_id: string;
  role: FamilyRole;
  joined_at: Date;
}

export type FamilyRow = FamilyTable;

/** Whose families: a user's (through membership) or an org's in one environment. */
export type FamilyTenant =
  | { kind: 'user'; userId: string; onlyFamilyId?: string }
  | { kind: 'org'; orgId: string; environment: Environment };

export async function insertFamily(
  db: Db,
  family: FamilyRow,
  owner: FamilyMemberTable | undefined,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('families').values(family).execute();
    if (owner) {
      await trx.insertInto('family_members').values(owner).execute();
    }
  });
}

export async function listFamilies(db: Db, tenant: FamilyTenant): Promise<FamilyRow[]> {
  let query = db.selectFrom('families').selectAll('families');
  if (tenant.kind === 'org') {
    query = query
      .where('families.org_id', '=', tenant.orgId)
      .where('families.environment', '=', tenant.environment);
  } else {
    query = query
      .innerJoin('family_members', 'family_members.family_id', 'families.id')
      .where('family_members.user_id', '=', tenant.userId);
    if (tenant.onlyFamilyId) {
      query = query.where('families.id', '=', tenant.onlyFamilyId);
    }
  }
  return query.orderBy('families.created_at', 'desc').orderBy('families.id', 'desc').execute();
}

export async function findMembership(db: Db, familyId: string, userId: string) {
  return db
    .selectFrom('family_members')
    .selectAll()
    .where('family_id', '=', familyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}
