// Lingering close, as nginx does it. Some answers leave before the request body has arrived:
// a 413 decided from Content-Length, a 401/403/429 from the headers, the drain's 503. If the
// server then closes its socket while the client is still sending, the kernel answers the
// unread bytes with a TCP reset, and a reset can destroy the answer before the client has
// read it: `fetch` reports EPIPE or ECONNRESET instead of the 413. So after such an answer
// the server half-closes (its FIN follows the answer) and keeps reading and discarding the
// body until the client has sent all of it or closed, within bounds, and only then closes.
//
// Node already discards the rest of a body once the answer is sent (it "dumps" the request);
// what it does not do is wait for it before closing a `Connection: close` socket, nor bound
// how long it keeps reading on a keep-alive one. Both are done here.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerBounds {
  /** Most bytes read and discarded after the answer (checked every `checkMs`). */
  maxBytes: number;
  /** Longest the socket stays open after the answer. */
  maxMs: number;
  /** Longest wait for the next bytes (a client that stalls is not waited for). */
  idleMs: number;
  /** How often progress is looked at. */
  checkMs: number;
}

/** Chosen in docs/decisions.md ("Lingering close"). */
export const LINGER_BOUNDS: LingerBounds = {
  maxBytes: 64 * 1024 * 1024,
  maxMs: 10_000,
  idleMs: 2_000,
  checkMs: 50,
};

/**
 * Node no longer hands a dumped body to the request stream (no 'data' events), so progress
 * is read off the socket's own byte count, on a timer.
 *
 * A timer fires in the event loop's timers phase, before that turn's socket reads. After the
 * process itself was held up (a long synchronous task, a collection, a busy machine), a look
 * taken there finds no new bytes although the client kept sending all along: they wait in the
 * kernel, unread, and cutting then closes on unread bytes, a reset that a client still
 * writing meets before it has read its answer. So the timer only schedules the look, which
 * is taken in the check phase, after the reads of the same turn (as nginx looks at its timers
 * after its events): bytes that were waiting count as progress.
 */
function linger(request: IncomingMessage, socket: Socket, bounds: LingerBounds): void {
  // After a `Connection: close` answer Node has ended the socket (its FIN follows the answer)
  // and destroys it once that is flushed; keep the half-closed socket reading instead, until
  // the body is in.
  const closing = socket.writableEnded;
  if (closing) {
    socket.removeListener('finish', socket.destroy);
  }
  const startedAt = Date.now();
  const startBytes = socket.bytesRead;
  let lastBytes = startBytes;
  let lastProgressAt = startedAt;
  let look: NodeJS.Immediate | undefined;
  const check = setInterval(() => {
    look ??= setImmediate(judge);
  }, bounds.checkMs);
  function judge(): void {
    look = undefined;
    const now = Date.now();
    const bytes = socket.bytesRead;
    if (bytes !== lastBytes) {
      lastBytes = bytes;
      lastProgressAt = now;
    }
    if (
      bytes - startBytes > bounds.maxBytes ||
      now - startedAt > bounds.maxMs ||
      now - lastProgressAt > bounds.idleMs
    ) {
      stop(true);
    }
  }
  function stop(cut: boolean): void {
    clearInterval(check);
    if (look !== undefined) {
      clearImmediate(look);
      look = undefined;
    }
    request.removeListener('end', onDone);
    socket.removeListener('end', onDone);
    socket.removeListener('close', onDone);
    // The body is in (or the client gave up): a closing socket can now close without a
    // reset. A bound that ran out cuts the connection whatever it was.
    if (cut || closing) {
      socket.destroy();
    }
  }
  const onDone = () => stop(false);
  request.once('end', onDone);
  socket.once('end', onDone);
  socket.once('close', onDone);
  // Node dumps an unread body already; a body a parser stopped reading half-way (it hit the
  // size limit) is resumed here, so it flows and is discarded.
  request.resume();
}

/** Lets every early answer of `server` linger within `bounds`. */
export function lingerOnEarlyAnswers(server: Server, bounds: LingerBounds = LINGER_BOUNDS): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // Without Content-Length or Transfer-Encoding an HTTP/1.1 request has no body (most
    // reads): nothing can arrive after the answer, so no listener per request for them.
    const headers = request.headers;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
      return;
    }
    response.once('finish', () => {
      const socket = request.socket;
      // Only an answer that left before its body was in, on a socket still open.
      if (!request.complete && !socket.destroyed) {
        linger(request, socket, bounds);
      }
    });
  });
}
