// Sending an export document: a download streamed as it is written. Once the first piece has
// left, the status and headers are on the wire, so a later failure cannot become an error
// answer: it is logged and the connection closed before the end, and the client holds a body
// that is cut short (not valid JSON; a chunked reply without its last chunk).
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { batched, type Chunks } from './json-writer.js';

/**
 * The document, a failure logged on its way to Fastify (which then destroys the connection:
 * with the request log disabled, Fastify itself says nothing of it).
 */
async function* reportingFailure(chunks: Chunks, log: FastifyBaseLogger, filename: string) {
  try {
    yield* chunks;
  } catch (error) {
    log.error(
      { err: error, export: filename },
      'export failed mid-stream: the download is cut short',
    );
    throw error;
  }
}

export function sendDownload(reply: FastifyReply, filename: string, chunks: Chunks) {
  const body = Readable.from(batched(reportingFailure(chunks, reply.log, filename)), {
    objectMode: false,
  });
  return reply
    .type('application/json; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .send(body);
}
