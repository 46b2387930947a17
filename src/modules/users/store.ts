// SQL of users: one row per (issuer, subject) seen in a session token.
import type { Db } from '../../db/connect.js';

declare module '../../db/schema.js' {
  interface Database {
    users: UserTable;
  }
}

export interface UserTable {
  id: string;
  issuer: string;
  subject: string;
  email: string;
  name: string;
  created_at: Date;
}

export type UserRow = UserTable;

/** Creates the user on first sight; later sights refresh email and name from the claims. */
export async function upsertUser(db: Db, user: UserRow): Promise<UserRow> {
  return db
    .insertInto('users')
    .values(user)
    .onConflict((conflict) =>
      conflict.columns(['issuer', 'subject']).doUpdateSet({
        email: (eb) => eb.ref('excluded.email'),
        name: (eb) => eb.ref('excluded.name'),
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}
