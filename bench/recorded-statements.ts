// Statements recorded from Haven's own store functions rather than retyped, so the bench's
// comparators run exactly what Haven runs (children-read-sql.ts, quick-setup-sql.ts). The
// functions run against a Kysely whose driver executes nothing (every query answers no rows)
// and whose log records each statement sent.
import {
  type CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import type { Db } from '../src/db/connect.js';
import type { Database } from '../src/db/schema.js';

/** One statement as `pg` takes it: its text and its parameters, in order. */
export interface Statement {
  sql: string;
  parameters: unknown[];
}

/** Every statement `run` executes, in order. */
export async function statementsOf(run: (db: Db) => Promise<unknown>): Promise<Statement[]> {
  const recorded: CompiledQuery[] = [];
  const db: Db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      if (event.level === 'query') {
        recorded.push(event.query);
      }
    },
  });
  await run(db);
  return recorded.map((query) => ({ sql: query.sql, parameters: [...query.parameters] }));
}
