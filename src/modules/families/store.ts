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

export async function findFamily(db: Db, familyId: string): Promise<FamilyRow | undefined> {
  return db.selectFrom('families').selectAll().where('id', '=', familyId).executeTakeFirst();
}

export async function renameFamily(db: Db, familyId: string, name: string, now: Date) {
  return db
    .updateTable('families')
    .set({ name, updated_at: now })
    .where('id', '=', familyId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Children, members, tokens and everything else of the family go with it (cascade). */
export async function deleteFamily(db: Db, familyId: string): Promise<void> {
  await db.deleteFrom('families').where('id', '=', familyId).execute();
}

export async function listMembers(db: Db, familyId: string): Promise<FamilyMemberTable[]> {
  return db
    .selectFrom('family_members')
    .selectAll()
    .where('family_id', '=', familyId)
    .orderBy('joined_at')
    .orderBy('id')
    .execute();
}

export async function insertMember(db: Db, member: FamilyMemberTable): Promise<boolean> {
  const result = await db
    .insertInto('family_members')
    .values(member)
    .onConflict((conflict) => conflict.columns(['family_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Changes or removes a member unless the family would be left without an owner; the owner
 * count is read under a lock on the family row, so concurrent changes cannot both pass.
 */
export async function changeMemberKeepingOwner(
  db: Db,
  familyId: string,
  memberId: string,
  change: { role: FamilyRole } | 'delete',
): Promise<FamilyMemberTable | 'not_found' | 'last_owner' | 'deleted'> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('families').select('id').where('id', '=', familyId).forUpdate().execute();
    const member = await trx
      .selectFrom('family_members')
      .selectAll()
      .where('family_id', '=', familyId)
      .where('id', '=', memberId)
      .executeTakeFirst();
    if (!member) {
      return 'not_found';
    }
    const losesOwner = member.role === 'owner' && (change === 'delete' || change.role !== 'owner');
    if (losesOwner) {
      const owners = await trx
        .selectFrom('family_members')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('family_id', '=', familyId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      if (owners.n <= 1) {
        return 'last_owner';
      }
    }
    if (change === 'delete') {
      await trx.deleteFrom('family_members').where('id', '=', memberId).execute();
      return 'deleted';
    }
    return trx
      .updateTable('family_members')
      .set({ role: change.role })
      .where('id', '=', memberId)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}
