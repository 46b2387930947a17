// The comparators of `npm run bench` that do a row's own work with nothing around it: a bare
// node:http server answering every request with the bytes Haven sent on that row (status,
// content type, body; read once from BENCH_RESPONSE_FILE). With BENCH_STATEMENTS (JSON, the
// statements Haven runs for the row, from bench/children-read-sql.ts) and DATABASE_URL, it
// first runs those statements one after another on a `pg` pool of BENCH_POOL_SIZE, as Haven
// does (comparator-statements.mjs), and only then answers. With BENCH_VERIFY_PUBLIC_KEY (an
// Ed25519 JWK `x`) and BENCH_VERIFY_TARGET_URI, it first does what any server must for a
// signed request (signed-request-check.mjs), and answers 500 to one that fails it.
import { createServer } from 'node:http';
import pg from 'pg';
import { runStatements } from './comparator-statements.mjs';
import { answerFailure, recordedAnswer } from './recorded-answer.mjs';
import { signedRequestCheck } from './signed-request-check.mjs';

const { status, body, headers } = recordedAnswer();
const statements = process.env.BENCH_STATEMENTS ? JSON.parse(process.env.BENCH_STATEMENTS) : [];
const pool =
  statements.length > 0
    ? new pg.Pool({
        connectionString: process.env.DATABASE_URL,
        max: Number(process.env.BENCH_POOL_SIZE ?? 10),
      })
    : undefined;
const checkSigned = process.env.BENCH_VERIFY_PUBLIC_KEY
  ? signedRequestCheck(process.env.BENCH_VERIFY_PUBLIC_KEY, process.env.BENCH_VERIFY_TARGET_URI)
  : undefined;

function answer(res) {
  res.writeHead(status, headers);
  res.end(body);
}

const server = createServer((request, res) => {
  if (checkSigned) {
    checkSigned(request).then(
      (valid) => (valid ? answer(res) : answerFailure(res, 'signature check failed')),
      (error) => answerFailure(res, error),
    );
    return;
  }
  if (!pool) {
    answer(res);
    return;
  }
  runStatements(pool, statements).then(
    () => answer(res),
    (error) => answerFailure(res, error),
  );
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () =>
  server.close(() => (pool ? pool.end() : Promise.resolve()).then(() => process.exit(0))),
);
