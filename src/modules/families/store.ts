// SQL of families and their members. Which families a caller sees is decided by the service
// and expressed here as a tenant filter.

import {
  type Compilable,
  type Kysely,
  type SelectQueryBuilder,
  sql,
  type Transaction,
} from 'kysely';
import type { Environment } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { reusedStatement } from '../../db/reused-statement.js';
import type { Database } from '../../db/schema.js';

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
  /** The sandbox test clock the family lives by; null: the real clock. */
  test_clock_id: string | null;
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

/** The family and its first owner (the caller's transaction holds both). */
export async function insertFamily(
  trx: Transaction<Database>,
  family: FamilyRow,
  owner: FamilyMemberTable | undefined,
): Promise<void> {
  await trx.insertInto('families').values(family).execute();
  if (owner) {
    await trx.insertInto('family_members').values(owner).execute();
  }
}

function newestFamiliesFirst<O>(query: SelectQueryBuilder<Database, 'families', O>) {
  return query.orderBy('families.created_at', 'desc').orderBy('families.id', 'desc');
}

/** A user's families (through membership). */
function membersFamilies(db: Db, userId: string) {
  return db
    .selectFrom('families')
    .selectAll('families')
    .innerJoin('family_members', 'family_members.family_id', 'families.id')
    .where('family_members.user_id', '=', userId);
}

// The families list, one statement per tenant shape, compiled once (db/reused-statement.ts).
const familiesOf = {
  org: reusedStatement(['orgId', 'environment'], (db, { orgId, environment }) =>
    newestFamiliesFirst(
      db
        .selectFrom('families')
        .selectAll('families')
        .where('families.org_id', '=', orgId)
        .where('families.environment', '=', environment as Environment),
    ),
  ),
  user: reusedStatement(['userId'], (db, { userId }) =>
    newestFamiliesFirst(membersFamilies(db, userId)),
  ),
  userOneFamily: reusedStatement(['userId', 'familyId'], (db, { userId, familyId }) =>
    newestFamiliesFirst(membersFamilies(db, userId).where('families.id', '=', familyId)),
  ),
};

export async function listFamilies(db: Db, tenant: FamilyTenant): Promise<FamilyRow[]> {
  if (tenant.kind === 'org') {
    return familiesOf.org.execute(db, { orgId: tenant.orgId, environment: tenant.environment });
  }
  return tenant.onlyFamilyId
    ? familiesOf.userOneFamily.execute(db, { userId: tenant.userId, familyId: tenant.onlyFamilyId })
    : familiesOf.user.execute(db, { userId: tenant.userId });
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
 * count is read under a lock on the family row (held by the caller's transaction until its
 * commit), so concurrent changes cannot both pass. A removal answers the member removed.
 */
export async function changeMemberKeepingOwner(
  trx: Transaction<Database>,
  familyId: string,
  memberId: string,
  change: { role: FamilyRole } | 'delete',
): Promise<
  { changed: FamilyMemberTable } | { deleted: FamilyMemberTable } | 'not_found' | 'last_owner'
> {
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
    return { deleted: member };
  }
  const changed = await trx
    .updateTable('family_members')
    .set({ role: change.role })
    .where('id', '=', memberId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { changed };
}

/**
 * What decides whether a caller sees a family, read in the same statement as what it asks
 * for (one round trip per read): the family's id, org and environment, and the caller's
 * role in it (null for a key, or for a user who is not a member). No row: no such family.
 */
export interface FamilyFacts {
  vis_family_id: string;
  vis_org_id: string | null;
  vis_environment: Environment;
  vis_role: FamilyRole | null;
  /** The frozen time of the family's test clock; null: the family lives by the real clock. */
  vis_clock_time: Date | null;
}

/**
 * The `FamilyFacts` columns of a query where the family is `f`. The role is a lookup of the
 * (family_id, user_id) unique index; a key has no role to look up.
 */
export function familyFacts(tenant: FamilyTenant) {
  const role =
    tenant.kind === 'user'
      ? sql<FamilyRole | null>`(select m.role from family_members m where m.family_id = f.id and m.user_id = ${tenant.userId})`
      : sql<FamilyRole | null>`null::text`;
  return [
    sql<string>`f.id`.as('vis_family_id'),
    sql<string | null>`f.org_id`.as('vis_org_id'),
    sql<Environment>`f.environment`.as('vis_environment'),
    role.as('vis_role'),
    // A lookup by primary key, and none at all for a family on the real clock.
    sql<Date | null>`(select t.frozen_time from test_clocks t where t.id = f.test_clock_id)`.as(
      'vis_clock_time',
    ),
  ] as const;
}

/** A read that takes a tenant and the statement's values. */
export interface TenantRead<Name extends string, Row> {
  execute(db: Db, values: Readonly<Record<Name, string>>, tenant: FamilyTenant): Promise<Row[]>;
}

/**
 * A read built once per kind of tenant (db/reused-statement.ts): the kind decides the
 * statement's shape (a user's role is looked up, a key has none), the ids are its values.
 * `build` gets a tenant whose ids are the statement's markers. A user tenant's
 * `onlyFamilyId` (an MCP token's one family) is not part of these statements: they read
 * the family's facts, and the service decides from those and the principal who sees it.
 */
export function tenantRead<Name extends string, Row>(
  names: readonly Name[],
  build: (db: Db, values: Readonly<Record<Name, string>>, tenant: FamilyTenant) => Compilable<Row>,
): TenantRead<Name, Row> {
  const forUser = reusedStatement([...names, 'userId'], (db, values) =>
    build(db, values, { kind: 'user', userId: values.userId }),
  );
  const forOrg = reusedStatement([...names, 'orgId', 'environment'], (db, values) =>
    build(db, values, {
      kind: 'org',
      orgId: values.orgId,
      environment: values.environment as Environment,
    }),
  );
  return {
    execute(db, values, tenant) {
      // The tenant's ids ahead of the spread: properties added after a leading spread take
      // V8's slow path (see answerFast in http/fast-path.ts).
      return tenant.kind === 'user'
        ? forUser.execute(db, { userId: tenant.userId, ...values })
        : forOrg.execute(db, { orgId: tenant.orgId, environment: tenant.environment, ...values });
    },
  };
}

const familyRead = tenantRead(['familyId'], (db, { familyId }, tenant) =>
  db
    .selectFrom('families as f')
    .selectAll('f')
    .select(familyFacts(tenant))
    .where('f.id', '=', familyId),
);

/** The family and the caller's facts about it, in one statement (no row: no such family). */
export async function findFamilyRead(db: Db, familyId: string, tenant: FamilyTenant) {
  const [row] = await familyRead.execute(db, { familyId }, tenant);
  return row;
}

/** Only the facts of a family (the anchor of a list read by family id). */
export function familyAnchor(db: Db, familyId: string, tenant: FamilyTenant) {
  return db.selectFrom('families as f').select(familyFacts(tenant)).where('f.id', '=', familyId);
}

/** The row without the `FamilyFacts` columns read alongside it. */
export function withoutFacts<R extends FamilyFacts>(row: R): Omit<R, keyof FamilyFacts> {
  const { vis_family_id, vis_org_id, vis_environment, vis_role, vis_clock_time, ...rest } = row;
  return rest;
}

/** A row read alongside its family's facts by a left join: all its columns null if absent. */
export type Alongside<R> = FamilyFacts & { [K in keyof R]: R[K] | null };

/**
 * One statement: an anchor (one row of `FamilyFacts`, or none when the anchor does not
 * exist) left-joined with the rows of a list read. No rows gives one row of facts whose row
 * columns are null; `order` (columns of `rows`) orders the result, as the subquery's own
 * order does not survive a join.
 */
/** The order of every list: newest first, the id breaking ties. */
export const NEWEST_FIRST = [
  ['created_at', 'desc'],
  ['id', 'desc'],
] as const;

export function withRows<R>(
  db: Db,
  anchor: SelectQueryBuilder<Database, never, FamilyFacts>,
  rows: SelectQueryBuilder<Database, never, R>,
  order: ReadonlyArray<readonly [keyof R & string, 'asc' | 'desc']>,
): SelectQueryBuilder<Database, never, Alongside<R>> {
  // Two derived tables of caller-chosen shapes: typed by the signature, not by Kysely.
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const untyped = db as unknown as Kysely<any>;
  let query = untyped
    .selectFrom(anchor.as('a'))
    .leftJoin(rows.as('r'), (join) => join.onTrue())
    .selectAll(['a', 'r']);
  for (const [column, direction] of order) {
    query = query.orderBy(`r.${column}`, direction);
  }
  return query as unknown as SelectQueryBuilder<Database, never, Alongside<R>>;
}

export async function listMembersRead(db: Db, familyId: string, tenant: FamilyTenant) {
  return withRows(
    db,
    familyAnchor(db, familyId, tenant),
    db.selectFrom('family_members').selectAll().where('family_id', '=', familyId),
    [
      ['joined_at', 'asc'],
      ['id', 'asc'],
    ],
  ).execute();
}
