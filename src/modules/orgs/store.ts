// SQL of developer orgs and their members.
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    developer_orgs: DeveloperOrgTable;
    developer_org_members: DeveloperOrgMemberTable;
  }
}

export type OrgRole = 'owner' | 'admin' | 'member';

export interface DeveloperOrgTable {
  id: string;
  name: string;
  slug: string;
  description: string;
  website_url: string;
  logo_url: string;
  owner_user_id: string;
  tier: string;
  rate_limit_rpm: number;
  created_at: Date;
  updated_at: Date;
}

export interface DeveloperOrgMemberTable {
  id: string;
  org_id: string;
  user_id: string;
  role: OrgRole;
  created_at: Date;
}

export type OrgRow = DeveloperOrgTable;
export type OrgMemberRow = DeveloperOrgMemberTable;

/** Inside the caller's transaction: an org never exists without its owner. */
export async function insertOrgWithOwner(trx: Db, org: OrgRow, owner: OrgMemberRow): Promise<void> {
  await trx.insertInto('developer_orgs').values(org).execute();
  await trx.insertInto('developer_org_members').values(owner).execute();
}

export async function listOrgsOfUser(db: Db, userId: string): Promise<OrgRow[]> {
  return db
    .selectFrom('developer_orgs')
    .innerJoin('developer_org_members', 'developer_org_members.org_id', 'developer_orgs.id')
    .selectAll('developer_orgs')
    .where('developer_org_members.user_id', '=', userId)
    .orderBy('developer_orgs.created_at', 'desc')
    .orderBy('developer_orgs.id')
    .execute();
}

export async function findOrg(db: Db, orgId: string): Promise<OrgRow | undefined> {
  return db.selectFrom('developer_orgs').selectAll().where('id', '=', orgId).executeTakeFirst();
}

export async function findMember(
  db: Db,
  orgId: string,
  userId: string,
): Promise<OrgMemberRow | undefined> {
  return db
    .selectFrom('developer_org_members')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function listMembers(db: Db, orgId: string): Promise<OrgMemberRow[]> {
  return db
    .selectFrom('developer_org_members')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function insertMember(db: Db, member: OrgMemberRow): Promise<boolean> {
  const inserted = await db
    .insertInto('developer_org_members')
    .values(member)
    .onConflict((conflict) => conflict.columns(['org_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Removes a member unless that would leave the org without an owner, inside the caller's
 * transaction. The owner count is read under a row lock on the org (held until the
 * caller's commit), so two concurrent removals cannot both pass.
 */
export async function deleteMemberKeepingOwner(
  trx: Db,
  orgId: string,
  userId: string,
): Promise<'deleted' | 'not_found' | 'last_owner'> {
  await trx.selectFrom('developer_orgs').select('id').where('id', '=', orgId).forUpdate().execute();
  const member = await findMember(trx, orgId, userId);
  if (!member) {
    return 'not_found';
  }
  if (member.role === 'owner') {
    const owners = await trx
      .selectFrom('developer_org_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    if (owners.n <= 1) {
      return 'last_owner';
    }
  }
  await trx
    .deleteFrom('developer_org_members')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .execute();
  return 'deleted';
}

export async function updateOrgTier(
  db: Db,
  orgId: string,
  tier: string,
  rateLimitRpm: number,
  now: Date,
): Promise<OrgRow | undefined> {
  return db
    .updateTable('developer_orgs')
    .set({ tier, rate_limit_rpm: rateLimitRpm, updated_at: now })
    .where('id', '=', orgId)
    .returningAll()
    .executeTakeFirst();
}
