// The answer Haven gave on a row, as bench/run.ts records it for the comparators
// (BENCH_RESPONSE_FILE: status, content type, body in base64), and how a bare comparator
// sends it or a failure of its own. Plain JavaScript: the comparators run under bare node.
import { readFileSync } from 'node:fs';

/** The recorded answer: its status, its body's bytes and the headers a bare server sends. */
export function recordedAnswer() {
  const recorded = JSON.parse(readFileSync(process.env.BENCH_RESPONSE_FILE, 'utf8'));
  const body = Buffer.from(recorded.bodyBase64, 'base64');
  const headers = { 'content-length': body.length };
  if (recorded.contentType) {
    headers['content-type'] = recorded.contentType;
  }
  return { status: recorded.status, body, headers };
}

/** A comparator's own failure: a 500 the bench counts and stops on. */
export function answerFailure(res, error) {
  res.writeHead(500, { 'content-type': 'text/plain' });
  res.end(String(error));
}
