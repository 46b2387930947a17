// A step the code under test takes made to fail in the database, as a process killed just
// before it would never complete it: a trigger that raises when a row matching `when` is
// inserted or updated. What ran before the step, and what depends on it, shows whether the
// two commit together. Returns the undo.
import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';

export interface InjectedFailure {
  /** Names the trigger and its function (unique within a test database). */
  name: string;
  on: 'insert' | 'update';
  table: string;
  /** The trigger's condition on `new`, as SQL written by the test (never user input). */
  when: string;
}

export async function injectFailure(
  db: Db,
  failure: InjectedFailure,
): Promise<() => Promise<void>> {
  const name = sql.raw(failure.name);
  await sql`
    create function ${name}() returns trigger language plpgsql as $$
    begin
      raise exception 'injected failure: the step after the write never happens';
    end $$`.execute(db);
  await sql`
    create trigger ${name} before ${sql.raw(failure.on)} on ${sql.table(failure.table)}
    for each row when (${sql.raw(failure.when)}) execute function ${name}()`.execute(db);
  return async () => {
    await sql`drop trigger ${name} on ${sql.table(failure.table)}`.execute(db);
    await sql`drop function ${name}`.execute(db);
  };
}
