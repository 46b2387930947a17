// The floor of the embedded quick setup row in `npm run bench`: a bare node:http server with
// PGlite on the server's own thread (as Haven runs it), on a copy of the bench's
// seeded data directory (BENCH_DATA_DIR). Each request's JSON body is read and parsed, the
// statement Haven sends for a new family (BENCH_STATEMENTS, from bench/quick-setup-sql.ts)
// is run with fresh ids in place of BENCH_FRESH_IDS (one randomUUID each, as Haven makes
// them), and the bytes Haven answered are sent (BENCH_RESPONSE_FILE). No authentication,
// validation, rules, events or log line: what any server writing these 24 rows into this
// database engine must do.
import { createServer } from 'node:http';
import { PGlite } from '@electric-sql/pglite';
import { freshIdWriter } from './fresh-ids.mjs';
import { answerFailure, recordedAnswer } from './recorded-answer.mjs';

const { status, body, headers } = recordedAnswer();
const [statement] = JSON.parse(process.env.BENCH_STATEMENTS);
const withFreshIds = freshIdWriter(statement.parameters, JSON.parse(process.env.BENCH_FRESH_IDS));

const db = await PGlite.create(process.env.BENCH_DATA_DIR);

const server = createServer((request, res) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch (error) {
      answerFailure(res, error);
      return;
    }
    db.query(statement.sql, withFreshIds().parameters).then(
      () => {
        res.writeHead(status, headers);
        res.end(body);
      },
      (error) => answerFailure(res, error),
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => db.close().then(() => process.exit(0))));
