// Which SQL statements one request ran: the database's statement log (Kysely's `log`, see
// createTestDatabase's onStatement) sees every statement executed through Kysely (query
// builders, `sql` templates, statements compiled once: db/reused-statement.ts; pg-boss's
// own raw text is not counted), and the recorder files it under the request that issued it
// (named by a header, carried by async context), so what other requests or background
// listeners run meanwhile is not counted. Injected requests start outside the caller's
// async context, hence the header and a hook rather than running the request inside the
// context.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

const HEADER = 'x-test-statements';

export interface StatementRecorder {
  /** For createTestDatabase: the log of every statement the database runs. */
  onStatement(sql: string): void;
  /** A plugin for buildTestApp: it ties a request to its record (see `during`). */
  plugin(app: FastifyInstance): Promise<void>;
  /**
   * Runs `work` with headers to send on the request under test; answers with what it
   * returned and the SQL of the statements that request ran.
   */
  during<T>(
    work: (headers: Record<string, string>) => Promise<T>,
  ): Promise<{ result: T; statements: string[] }>;
}

export function statementRecorder(): StatementRecorder {
  const current = new AsyncLocalStorage<string[]>();
  const open = new Map<string, string[]>();
  async function plugin(app: FastifyInstance) {
    // A callback hook: the context entered here is the one the rest of the request runs in.
    app.addHook('onRequest', (request, _reply, done) => {
      const record = open.get(String(request.headers[HEADER]));
      if (record) {
        current.enterWith(record);
      }
      done();
    });
  }
  // Not encapsulated: the hook applies to every route of the app.
  Object.assign(plugin, { [Symbol.for('skip-override')]: true });
  return {
    // The log is called where the statement was awaited: in the issuing request's context.
    onStatement: (sql) => current.getStore()?.push(sql),
    plugin,
    async during(work) {
      const id = randomUUID();
      const statements: string[] = [];
      open.set(id, statements);
      try {
        // Run inside the record's context too: where it does carry into the request (it
        // does for what runs before the header hook, e.g. a device key read in the
        // authentication hook), those statements count; the hook enters the same record.
        const result = await current.run(statements, async () => await work({ [HEADER]: id }));
        return { result, statements };
      } finally {
        open.delete(id);
      }
    },
  };
}
