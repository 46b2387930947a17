// The floor of the embedded quick setup row in `npm run bench`: a bare node:http server with
// PGlite on the server's own thread (as Haven runs it), on a copy of the bench's
// seeded data directory (BENCH_DATA_DIR). Each request's JSON body is read and parsed, the
// statement Haven sends for a new family (BENCH_STATEMENTS, from bench/quick-setup-sql.ts)
// is run with fresh ids in place of BENCH_FRESH_IDS (one randomUUID each, as Haven makes
// them), and the bytes Haven answered are sent (BENCH_RESPONSE_FILE). No authentication,
// validation, rules, events or log line: what any server writing these 24 rows into this
// database engine must do.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { PGlite } from '@electric-sql/pglite';
import { freshIdWriter } from './fresh-ids.mjs';

const response = JSON.parse(readFileSync(process.env.BENCH_RESPONSE_FILE, 'utf8'));
const body = Buffer.from(response.bodyBase64, 'base64');
const headers = { 'content-type': response.contentType, 'content-length': body.length };
const [statement] = JSON.parse(process.env.BENCH_STATEMENTS);
const withFreshIds = freshIdWriter(statement.parameters, JSON.parse(process.env.BENCH_FRESH_IDS));

const db = await PGlite.create(process.env.BENCH_DATA_DIR);

function fail(res, error) {
  res.writeHead(500, { 'content-type': 'text/plain' });
  res.end(String(error));
}

const server = createServer((request, res) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch (error) {
      fail(res, error);
      return;
    }
    db.query(statement.sql, withFreshIds().parameters).then(
      () => {
        res.writeHead(response.status, headers);
        res.end(body);
      },
      (error) => fail(res, error),
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => db.close().then(() => process.exit(0))));
