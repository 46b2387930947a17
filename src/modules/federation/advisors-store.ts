// SQL of org-registered advisors: the registration and its trust-list entry are written in
// one transaction (the caller's), so neither exists without the other.
import type { ColumnType } from 'kysely';
import type { Db } from '../../db/connect.js';
import { type EntryRow, insertEntry } from './entries-store.js';

declare module '../../db/schema.js' {
  interface Database {
    org_advisors: OrgAdvisorTable;
  }
}

export interface OrgAdvisorTable {
  id: string;
  org_id: string;
  slug: string;
  did: string;
  display_name: string;
  scope: 'family' | 'global';
  scope_family_id: string | null;
  manifest_url: string | null;
  publisher_org: string | null;
  callback_url: string | null;
  capability_domains: ColumnType<string[], string, string>;
  created_at: Date;
}

export interface OrgAdvisorRow extends Omit<OrgAdvisorTable, 'capability_domains'> {
  capability_domains: string[];
}

/**
 * False when the slug (or its DID) is taken, inside the caller's transaction, which must not
 * commit then: the trust-list entry may already be written and must not outlive a refused
 * registration.
 */
export async function insertOrgAdvisor(
  trx: Db,
  advisor: OrgAdvisorRow,
  entry: EntryRow,
): Promise<boolean> {
  if (!(await insertEntry(trx, entry))) {
    return false;
  }
  const inserted = await trx
    .insertInto('org_advisors')
    .values({ ...advisor, capability_domains: JSON.stringify(advisor.capability_domains) })
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function listOrgAdvisors(
  db: Db,
  orgId: string,
): Promise<Array<OrgAdvisorRow & Pick<EntryRow, 'key_id' | 'tier' | 'status'>>> {
  return db
    .selectFrom('org_advisors')
    .innerJoin('ocss_entries', 'ocss_entries.did', 'org_advisors.did')
    .selectAll('org_advisors')
    .select(['ocss_entries.key_id', 'ocss_entries.tier', 'ocss_entries.status'])
    .where('org_advisors.org_id', '=', orgId)
    .orderBy('org_advisors.created_at', 'desc')
    .execute();
}

export async function findOrgAdvisorByDid(
  db: Db,
  did: string,
): Promise<Pick<OrgAdvisorRow, 'scope' | 'scope_family_id'> | undefined> {
  return db
    .selectFrom('org_advisors')
    .select(['scope', 'scope_family_id'])
    .where('did', '=', did)
    .executeTakeFirst();
}

/** The org registration of `did` (its id and org), if an org registered it. */
export async function findOrgRegistration(
  db: Db,
  did: string,
): Promise<Pick<OrgAdvisorRow, 'id' | 'org_id'> | undefined> {
  return db
    .selectFrom('org_advisors')
    .select(['id', 'org_id'])
    .where('did', '=', did)
    .executeTakeFirst();
}
