// The framework's own share of a keyed read, for `BENCH_FRAMEWORK_BASELINE=1 npm run bench`:
// the `same SQL` comparator (same-bytes-server.mjs) inside a bare Fastify app — one route, no
// hooks, no schema — which runs the row's statements on a `pg` pool (comparator-statements.mjs,
// as the bare comparator runs them) and serialises the body Haven answered (parsed once) per
// request. Haven's figure minus this one is what Haven's own pipeline costs beyond Fastify
// and `pg`.
import Fastify from 'fastify';
import pg from 'pg';
import { runStatements } from './comparator-statements.mjs';
import { recordedAnswer } from './recorded-answer.mjs';

const { status, body } = recordedAnswer();
const payload = JSON.parse(body.toString('utf8'));
const statements = JSON.parse(process.env.BENCH_STATEMENTS ?? '[]');
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BENCH_POOL_SIZE ?? 10),
});

const app = Fastify({ logger: false });
app.get('/*', async (_request, reply) => {
  await runStatements(pool, statements);
  return reply.code(status).send(payload);
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0)),
);
