// pg-boss talks to the database through one function, `executeSql`. Routing it through our
// Kysely instance means one pool on PostgreSQL and, on embedded PGlite, the same serialised
// checkouts as every other query (PGlite is one connection: a second driver would interleave).
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type PgBoss from 'pg-boss';
import type { Database } from '../db/schema.js';

export function bossDatabase(db: Kysely<Database> | Transaction<Database>): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      // Parameterless text may hold several statements (pg-boss's own migrations and locked
      // blocks); both drivers send it through the simple protocol, which accepts that.
      const result = await db.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] };
    },
  } as PgBoss.Db;
}
