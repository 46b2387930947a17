// The SQL of Haven's children read, taken from Haven's own store functions rather than
// retyped, so the `pg` comparator of `npm run bench` runs exactly what Haven runs. The
// functions run against a Kysely whose driver executes nothing (every query answers no
// rows) and whose log records each compiled statement; a function that returns a query
// builder instead of running it is compiled.
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
import { listChildrenRead } from '../src/modules/children/store.js';
import type { FamilyTenant } from '../src/modules/families/store.js';

/** One statement as `pg` takes it: its text and its parameters, in order. */
export interface Statement {
  sql: string;
  parameters: unknown[];
}

interface Compilable {
  compile(): CompiledQuery;
}

function isCompilable(value: unknown): value is Compilable {
  return typeof (value as Compilable | undefined)?.compile === 'function';
}

/** Every statement `run` executes (or the one it returns, compiled), in order. */
export async function statementsOf(run: (db: Db) => unknown): Promise<Statement[]> {
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
  const result = run(db);
  if (isCompilable(result)) {
    recorded.push(result.compile());
  } else {
    await result;
  }
  return recorded.map((query) => ({ sql: query.sql, parameters: [...query.parameters] }));
}

/**
 * What Haven's children read runs for a key of `tenant`: one statement, the family's
 * visibility facts and its children together (issue 22 item 2).
 */
export function childrenReadStatements(
  familyId: string,
  tenant: FamilyTenant,
): Promise<Statement[]> {
  return statementsOf((db) => listChildrenRead(db, familyId, tenant));
}
