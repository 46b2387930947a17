// How the `same SQL` comparators (same-bytes-server.mjs, fastify-same-sql-server.mjs) run
// the statements Haven runs for a row: one after another on their `pg` pool, as named
// prepared statements, as Haven runs them on PostgreSQL, so both sides do the same database
// work. BENCH_COMPARATOR_PREPARED=0 runs them unnamed (`pg`'s default, and what the
// comparators did before Haven prepared its statements).
const prepared = process.env.BENCH_COMPARATOR_PREPARED !== '0';

export async function runStatements(pool, statements) {
  for (const [index, statement] of statements.entries()) {
    await (prepared
      ? pool.query({ name: `bench_${index}`, text: statement.sql, values: statement.parameters })
      : pool.query(statement.sql, statement.parameters));
  }
}
