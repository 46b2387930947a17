// What both partner doubles share: a local HTTP server, JSON bodies, faults a test queues for
// the next requests (a status with or without Retry-After, or a request left hanging), and
// serving only the routes a partner's reference documents.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Fault {
  /** Answer this status (with `body`) instead of serving the request. */
  status?: number;
  retryAfter?: string;
  body?: unknown;
  /** Leave the request unanswered this long, then serve it (a partner slower than the timeout). */
  hangMs?: number;
  /** Only requests whose method and path match; all when absent. */
  match?: RegExp;
}

export interface DoubleRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type DoubleAnswer = { status: number; body?: unknown };

/**
 * A route the partner's public reference documents, as a double serves it. A double serves
 * these and nothing else: any other method and path answers 405, so a client that drifts onto
 * an undocumented route fails against the double as it would against the partner, which
 * promises nothing there. (Documented routes no adapter calls are left out and answer 405 too.)
 */
export interface DocumentedRoute {
  method: string;
  /** The whole path, anchored; its capture groups reach `serve` percent-decoded. */
  path: RegExp;
  /** The reference page that documents it, so the table can be checked against the reference. */
  reference: string;
  serve(request: DoubleRequest, params: string[]): DoubleAnswer;
}

export abstract class DoubleServer {
  private server: Server | undefined;
  /** Faults for the next matching requests, taken one per request. */
  readonly faults: Fault[] = [];
  /** Every request served, as `METHOD /path` (for counting calls, never for asserting state). */
  readonly requests: string[] = [];
  /** The headers of every request served, beside its `METHOD /path` (trace headers, say). */
  readonly received: Array<{ line: string; headers: IncomingMessage['headers'] }> = [];
  /** Every request answered 405 because no documented route takes it, as `METHOD /path`. */
  readonly undocumented: string[] = [];

  /** The documented routes this double serves, first match wins. */
  protected abstract readonly routes: readonly DocumentedRoute[];

  /** The partner's refusal of a request before routing (its credentials check), else undefined. */
  protected abstract refuse(request: DoubleRequest): DoubleAnswer | undefined;

  /** The partner's answer to a method and path its reference does not document (a 405). */
  protected abstract notDocumented(request: DoubleRequest): DoubleAnswer;

  private handle(request: DoubleRequest): DoubleAnswer {
    const refused = this.refuse(request);
    if (refused) {
      return refused;
    }
    for (const route of this.routes) {
      const match = route.method === request.method ? route.path.exec(request.path) : null;
      if (match) {
        return route.serve(
          request,
          match.slice(1).map((part) => decodeURIComponent(part ?? '')),
        );
      }
    }
    this.undocumented.push(`${request.method} ${request.path}`);
    return this.notDocumented(request);
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | undefined;
    if (!address) {
      throw new Error('the double is not started');
    }
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private takeFault(line: string): Fault | undefined {
    const index = this.faults.findIndex((fault) => !fault.match || fault.match.test(line));
    return index === -1 ? undefined : this.faults.splice(index, 1)[0];
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0] as string;
    const line = `${req.method} ${path}`;
    this.requests.push(line);
    this.received.push({ line, headers: req.headers });
    const fault = this.takeFault(line);
    if (fault?.hangMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, fault.hangMs));
      if (res.destroyed || req.destroyed) {
        return;
      }
    }
    let answer: DoubleAnswer;
    if (fault?.status !== undefined) {
      answer = { status: fault.status, body: fault.body };
      if (fault.retryAfter !== undefined) {
        res.setHeader('retry-after', fault.retryAfter);
      }
    } else {
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        this.send(res, { status: 400, body: this.malformed() });
        return;
      }
      answer = this.handle({ method: req.method ?? 'GET', path, headers: req.headers, body });
    }
    this.send(res, answer);
  }

  /** The partner's answer to a body that is not JSON. */
  protected abstract malformed(): unknown;

  private send(res: ServerResponse, answer: DoubleAnswer): void {
    if (answer.body === undefined) {
      res.writeHead(answer.status).end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }
}
