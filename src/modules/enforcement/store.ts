// SQL of enforcement jobs and of the sandbox's armed platform failures.
import { type ColumnType, sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { childAnchor } from '../children/store.js';
import { type FamilyTenant, familyFacts, NEWEST_FIRST, withRows } from '../families/store.js';

declare module '../../db/schema.js' {
  interface Database {
    enforcement_jobs: EnforcementJobTable;
    sandbox_platform_failures: SandboxPlatformFailureTable;
  }
}

export type JobStatus = 'pending' | 'running' | 'completed' | 'failed' | 'partial';
export type FinishedStatus = Extract<JobStatus, 'completed' | 'failed' | 'partial'>;
export type TriggerType = 'manual' | 'policy_change' | 'age_change' | 'release';
export type PlatformStatus = 'success' | 'failed' | 'unsupported';

/** One platform's part of a job, as the API shows it. */
export interface PlatformOutcome {
  platform_id: string;
  connection_id: string;
  status: PlatformStatus;
  rules_applied: number;
  rules_skipped: number;
  rules_failed: number;
  error_message: string | null;
}

export interface EnforcementJobTable {
  id: string;
  child_id: string;
  family_id: string;
  policy_id: string;
  policy_version: number;
  trigger_type: TriggerType;
  /** The subset the caller asked for; null = every connected platform. */
  platform_ids: string[] | null;
  status: JobStatus;
  /** jsonb: read back parsed, written as JSON text. */
  results: ColumnType<PlatformOutcome[], string, string>;
  /** Why a job failed as a whole (for operators; not part of the API resource). */
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface SandboxPlatformFailureTable {
  family_id: string;
  platform_id: string;
  remaining: number | null;
  message: string;
  created_at: Date;
}

export type JobRow = Omit<EnforcementJobTable, 'results'> & { results: PlatformOutcome[] };
export type NewJob = Omit<JobRow, 'results' | 'error' | 'started_at' | 'completed_at'>;
export type FailureRow = SandboxPlatformFailureTable;

const FINISHED: readonly JobStatus[] = ['completed', 'failed', 'partial'];

function newJobValues(job: NewJob) {
  return { ...job, results: '[]', error: null, started_at: null, completed_at: null };
}

export async function insertJob(db: Db, job: NewJob): Promise<void> {
  await db.insertInto('enforcement_jobs').values(newJobValues(job)).execute();
}

/**
 * Queues a policy_change job, or, when the child already has one waiting, points that one at
 * the newer policy. Atomic through the partial unique index: `inserted` is false when an
 * existing job absorbed the change (and then no new queue message is needed).
 */
export async function upsertPolicyChangeJob(
  db: Db,
  job: NewJob & { trigger_type: 'policy_change' },
): Promise<{ id: string; inserted: boolean }> {
  const row = await db
    .insertInto('enforcement_jobs')
    .values(newJobValues(job))
    .onConflict((oc) =>
      oc
        .column('child_id')
        // A literal predicate: PostgreSQL infers the partial index only from constants.
        .where(sql<boolean>`status = 'pending' and trigger_type = 'policy_change'`)
        .doUpdateSet({ policy_id: job.policy_id, policy_version: job.policy_version }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, inserted: row.id === job.id };
}

/**
 * Queues a release job. The child's automatic jobs still pending (policy_change, age_change)
 * become the release instead: what they would push is no longer in force, and they have not
 * run, so their queued messages run the release (`inserted` false: no new message needed).
 */
export async function upsertReleaseJob(
  db: Db,
  job: NewJob & { trigger_type: 'release' },
): Promise<{ id: string; inserted: boolean }> {
  const taken = await db
    .updateTable('enforcement_jobs')
    .set({ trigger_type: 'release', policy_id: job.policy_id, policy_version: job.policy_version })
    .where('child_id', '=', job.child_id)
    .where('status', '=', 'pending')
    .where('trigger_type', 'in', ['policy_change', 'age_change'])
    .returning('id')
    .execute();
  const [first] = taken;
  if (first) {
    return { id: first.id, inserted: false };
  }
  await insertJob(db, job);
  return { id: job.id, inserted: true };
}

/** A job with its family's facts for `tenant` (no row: no such job). */
export async function findJobRead(db: Db, id: string, tenant: FamilyTenant) {
  return db
    .selectFrom('enforcement_jobs as j')
    .innerJoin('families as f', 'f.id', 'j.family_id')
    .selectAll('j')
    .select(familyFacts(tenant))
    .where('j.id', '=', id)
    .executeTakeFirst();
}

/** A child's latest jobs, newest first, with its family's facts: one statement. */
export async function listJobsOfChildRead(
  db: Db,
  childId: string,
  tenant: FamilyTenant,
  limit: number,
) {
  return withRows(
    db,
    childAnchor(db, childId, tenant),
    db
      .selectFrom('enforcement_jobs')
      .selectAll()
      .where('child_id', '=', childId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit),
    NEWEST_FIRST,
  ).execute();
}

export async function listJobsOfFamilies(
  db: Db,
  familyIds: string[],
  page: { limit: number; offset: number },
): Promise<JobRow[]> {
  if (familyIds.length === 0) {
    return [];
  }
  return db
    .selectFrom('enforcement_jobs')
    .selectAll()
    .where('family_id', 'in', familyIds)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/**
 * Claims a job for a run: pending, or running (a retry after a crash or a thrown handler),
 * which starts over with no results. A finished or deleted job answers undefined.
 */
export async function startJob(db: Db, id: string, now: Date): Promise<JobRow | undefined> {
  return db
    .updateTable('enforcement_jobs')
    .set({ status: 'running', started_at: now, completed_at: null, results: '[]', error: null })
    .where('id', '=', id)
    .where('status', 'not in', FINISHED)
    .returningAll()
    .executeTakeFirst();
}

export async function finishJob(
  db: Db,
  id: string,
  outcome: {
    status: FinishedStatus;
    results: PlatformOutcome[];
    policy_id: string;
    policy_version: number;
    error: string | null;
    completed_at: Date;
  },
): Promise<JobRow | undefined> {
  return db
    .updateTable('enforcement_jobs')
    .set({ ...outcome, results: JSON.stringify(outcome.results) })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
}

export async function armFailure(db: Db, failure: FailureRow): Promise<FailureRow> {
  return db
    .insertInto('sandbox_platform_failures')
    .values(failure)
    .onConflict((oc) =>
      oc.columns(['family_id', 'platform_id']).doUpdateSet({
        remaining: failure.remaining,
        message: failure.message,
        created_at: failure.created_at,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether a failure was armed (and is now cleared). */
export async function clearFailure(db: Db, familyId: string, platformId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sandbox_platform_failures')
    .where('family_id', '=', familyId)
    .where('platform_id', '=', platformId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Uses up one armed failure, if there is one: the message to fail with. A counted failure is
 * removed when its last use is taken; one without a count stays until cleared.
 */
export async function consumeFailure(
  db: Db,
  familyId: string,
  platformId: string,
): Promise<string | undefined> {
  const hit = await db
    .updateTable('sandbox_platform_failures')
    .set({ remaining: sql`remaining - 1` })
    .where('family_id', '=', familyId)
    .where('platform_id', '=', platformId)
    .where((eb) => eb.or([eb('remaining', 'is', null), eb('remaining', '>', 0)]))
    .returning(['message', 'remaining'])
    .executeTakeFirst();
  if (hit?.remaining === 0) {
    await db
      .deleteFrom('sandbox_platform_failures')
      .where('family_id', '=', familyId)
      .where('platform_id', '=', platformId)
      .where('remaining', '=', 0)
      .execute();
  }
  return hit?.message;
}
