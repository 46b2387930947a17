// A round-robin HTTP load balancer on 127.0.0.1 in front of several server processes, for
// tests of what instances share. Each request goes to the next live upstream. It hides no
// failure: it never retries, so a request an upstream does not answer reaches the client as
// one (502 when nothing was answered yet, a reset connection when an answer was cut off). An
// upstream that refuses a connection is dropped from the rotation, as a balancer's health
// check would drop a dead instance.
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';

export interface Upstream {
  url: string;
  live: boolean;
  /** Answers passed on to clients (any status). */
  answered: number;
  /** Requests the client saw fail: 502 or a cut-off answer. */
  failed: number;
  /** Why they failed: error code → how often. */
  failures: Record<string, number>;
  /** Requests passed on and not yet answered in full. */
  inFlight: number;
  /** Why it left the rotation. */
  droppedFor?: string;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, not the message. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name)) {
      kept[name] = value;
    }
  }
  return kept;
}

function errorCode(error: unknown): string {
  return (error as { code?: string }).code ?? String(error);
}

export class RoundRobinBalancer {
  readonly upstreams: Upstream[];
  url = '';
  private server: Server | undefined;
  private next = 0;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(upstreamUrls: string[]) {
    this.upstreams = upstreamUrls.map((url) => ({
      url,
      live: true,
      answered: 0,
      failed: 0,
      failures: {},
      inFlight: 0,
    }));
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => this.forward(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  /** The upstreams still in the rotation. */
  live(): Upstream[] {
    return this.upstreams.filter((upstream) => upstream.live);
  }

  private pick(): Upstream | undefined {
    for (let tried = 0; tried < this.upstreams.length; tried++) {
      const upstream = this.upstreams[this.next % this.upstreams.length] as Upstream;
      this.next = (this.next + 1) % this.upstreams.length;
      if (upstream.live) {
        return upstream;
      }
    }
    return undefined;
  }

  private forward(request: IncomingMessage, response: ServerResponse): void {
    const upstream = this.pick();
    if (!upstream) {
      request.resume();
      response.writeHead(502, { 'content-type': 'text/plain' }).end('no live upstream');
      return;
    }
    const target = new URL(upstream.url);
    const outgoing = httpRequest({
      host: target.hostname,
      port: target.port,
      method: request.method,
      path: request.url,
      headers: endToEnd(request.headers),
      agent: this.agent,
    });
    upstream.inFlight++;
    let done = false;
    const fail = (why: string) => {
      if (done) {
        return;
      }
      done = true;
      upstream.inFlight--;
      upstream.failed++;
      upstream.failures[why] = (upstream.failures[why] ?? 0) + 1;
      if (response.headersSent) {
        // Part of an answer went out: the client must not take it for a whole one.
        response.destroy();
      } else {
        response
          .writeHead(502, { 'content-type': 'text/plain', connection: 'close' })
          .end(`bad gateway: ${upstream.url} ${why}`);
      }
    };
    outgoing.on('response', (answer) => {
      response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(response);
      answer.on('error', () => fail('answer cut off'));
      answer.on('close', () => {
        if (!answer.complete) {
          fail('answer cut off');
        } else if (!done) {
          done = true;
          upstream.inFlight--;
          upstream.answered++;
        }
      });
    });
    outgoing.on('error', (error) => {
      const code = errorCode(error);
      // A refused connection: nothing listens there any more.
      if (code === 'ECONNREFUSED' && upstream.live) {
        upstream.live = false;
        upstream.droppedFor = code;
      }
      fail(code);
    });
    // The client went away before its answer was through: so does the upstream request.
    response.on('close', () => {
      if (!response.writableFinished) {
        outgoing.destroy();
      }
    });
    request.pipe(outgoing);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.agent.destroy();
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
}
