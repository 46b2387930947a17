// What both partner doubles share: a local HTTP server, JSON bodies, and faults a test queues
// for the next requests (a status with or without Retry-After, or a request left hanging).
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

export abstract class DoubleServer {
  private server: Server | undefined;
  /** Faults for the next matching requests, taken one per request. */
  readonly faults: Fault[] = [];
  /** Every request served, as `METHOD /path` (for counting calls, never for asserting state). */
  readonly requests: string[] = [];

  protected abstract handle(request: DoubleRequest): DoubleAnswer;

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
