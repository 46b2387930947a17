// Which database statements a piece of work ran: the app gets the real database handle with a
// Kysely plugin that notes every statement it compiles (nothing is mocked; the statements
// still run on the real driver), attributed through AsyncLocalStorage to the work that
// issued them, so background timers (write-behind flushes, job workers) are not counted.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import type { TestDatabase } from './database.js';

export interface StatementLog {
  /** The database to hand to buildTestApp. */
  database: TestDatabase;
  /** Runs `work`; answers its result and the kinds of statement it ran (e.g. SelectQueryNode). */
  during<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }>;
}

export function logStatements(database: TestDatabase): StatementLog {
  const scope = new AsyncLocalStorage<string[]>();
  const plugin: KyselyPlugin = {
    transformQuery({ node }): RootOperationNode {
      scope.getStore()?.push(node.kind);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const handle = { ...database.handle, db: database.handle.db.withPlugin(plugin) };
  return {
    database: { ...database, handle },
    async during(work) {
      const statements: string[] = [];
      // Awaited inside run(): app.inject answers a lazy thenable, which starts the request
      // only when awaited, and must do so within the scope.
      const result = await scope.run(statements, async () => await work());
      return { result, statements };
    },
  };
}
