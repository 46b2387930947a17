// SQL of anonymous sandbox sessions: creation under the session cap, eviction with the
// session's data, and batched last-seen writes.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { DEMO_FAMILY_ID } from '../demo/demo-family.js';

declare module '../../db/schema.js' {
  interface Database {
    sandbox_sessions: SandboxSessionTable;
  }
}

export interface SandboxSessionTable {
  name: string;
  user_id: string;
  created_at: Date;
  last_seen_at: Date;
}

/** Serialises session creation across processes, so the cap holds under concurrency. */
const CREATION_LOCK = 0x5bd5e551;

export const SANDBOX_SESSION_ISSUER = 'haven-sandbox-session';

export async function findSessionUser(db: Db, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('sandbox_sessions')
    .select('user_id')
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.user_id;
}

export type CreateOutcome =
  | { outcome: 'existing' | 'created'; userId: string; evicted: string[] }
  /** `quietestSeenAt`: when the quietest session was last seen; it can be evicted a grace later. */
  | { outcome: 'full'; evicted: string[]; quietestSeenAt: Date };

/**
 * Returns the session's user, creating both if needed. Before creating, sessions idle since
 * `idleBefore` are deleted; if the cap is still reached, the least recently seen session is
 * evicted when it has been quiet since `evictableBefore`, otherwise the answer is `full`.
 */
export async function createSession(
  db: Db,
  input: {
    name: string;
    userId: string;
    now: Date;
    max: number;
    idleBefore: Date;
    evictableBefore: Date;
    /** Never evicted: the shared session everyone gets without a header. */
    keep: string;
  },
): Promise<CreateOutcome> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${CREATION_LOCK})`.execute(trx);
    const existing = await trx
      .selectFrom('sandbox_sessions')
      .select('user_id')
      .where('name', '=', input.name)
      .executeTakeFirst();
    if (existing) {
      return { outcome: 'existing', userId: existing.user_id, evicted: [] };
    }
    const idle = await trx
      .selectFrom('sandbox_sessions')
      .select(['name', 'user_id'])
      .where('last_seen_at', '<', input.idleBefore)
      .where('name', '!=', input.keep)
      .execute();
    const evicted = idle.map((row) => row.name);
    await deleteSessionData(
      trx,
      idle.map((row) => row.user_id),
    );
    const { count } = await trx
      .selectFrom('sandbox_sessions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(count) >= input.max) {
      const oldest = await trx
        .selectFrom('sandbox_sessions')
        .select(['name', 'user_id'])
        .where('last_seen_at', '<', input.evictableBefore)
        .where('name', '!=', input.keep)
        .orderBy('last_seen_at')
        .limit(Number(count) - input.max + 1)
        .execute();
      if (Number(count) - oldest.length >= input.max) {
        const quietest = await trx
          .selectFrom('sandbox_sessions')
          .select('last_seen_at')
          .where('name', '!=', input.keep)
          .orderBy('last_seen_at')
          .limit(1)
          .executeTakeFirst();
        return { outcome: 'full', evicted, quietestSeenAt: quietest?.last_seen_at ?? input.now };
      }
      evicted.push(...oldest.map((row) => row.name));
      await deleteSessionData(
        trx,
        oldest.map((row) => row.user_id),
      );
    }
    await trx
      .insertInto('users')
      .values({
        id: input.userId,
        issuer: SANDBOX_SESSION_ISSUER,
        subject: input.name,
        email: '',
        name: `Sandbox session ${input.name}`,
        created_at: input.now,
      })
      .execute();
    await trx
      .insertInto('sandbox_sessions')
      .values({
        name: input.name,
        user_id: input.userId,
        created_at: input.now,
        last_seen_at: input.now,
      })
      .execute();
    return { outcome: 'created', userId: input.userId, evicted };
  });
}

/**
 * Deletes sandbox users and what they made: the families they own (children, policies and
 * everything else cascade), their other memberships, and the users (their session rows
 * cascade). The demo family is never touched.
 */
async function deleteSessionData(trx: Db, userIds: string[]): Promise<void> {
  if (userIds.length === 0) {
    return;
  }
  await trx
    .deleteFrom('families')
    .where('id', '!=', DEMO_FAMILY_ID)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('family_members')
        .select('family_id')
        .where('user_id', 'in', userIds)
        .where('role', '=', 'owner'),
    )
    .execute();
  await trx.deleteFrom('family_members').where('user_id', 'in', userIds).execute();
  await trx.deleteFrom('mcp_tokens').where('user_id', 'in', userIds).execute();
  await trx.deleteFrom('developer_org_members').where('user_id', 'in', userIds).execute();
  await trx.deleteFrom('users').where('id', 'in', userIds).execute();
}

/** Deletes sessions idle since `idleBefore`; returns their names. */
export async function sweepIdleSessions(db: Db, idleBefore: Date, keep: string): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${CREATION_LOCK})`.execute(trx);
    const idle = await trx
      .selectFrom('sandbox_sessions')
      .select(['name', 'user_id'])
      .where('last_seen_at', '<', idleBefore)
      .where('name', '!=', keep)
      .execute();
    await deleteSessionData(
      trx,
      idle.map((row) => row.user_id),
    );
    return idle.map((row) => row.name);
  });
}

/** One statement for a batch of last-seen times; never moves a time backwards. */
export async function writeLastSeen(db: Db, seen: ReadonlyMap<string, Date>): Promise<void> {
  if (seen.size === 0) {
    return;
  }
  const rows = [...seen].map(
    ([name, at]) => sql`(${name}::text, ${at.toISOString()}::timestamptz)`,
  );
  await sql`
    update sandbox_sessions as s set last_seen_at = v.at
    from (values ${sql.join(rows)}) as v(name, at)
    where s.name = v.name and s.last_seen_at < v.at
  `.execute(db);
}
