// A webhook endpoint on 127.0.0.1 that records every request and answers what the test tells
// it to: a status (with headers), or nothing at all (a hung endpoint).
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server, type ServerResponse } from 'node:http';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export class WebhookReceiver {
  readonly received: ReceivedRequest[] = [];
  /** Decides the answer to the n-th request (0-based); 204 unless a test says otherwise. */
  answer: (request: ReceivedRequest, index: number) => ReceiverAnswer = () => ({ status: 204 });
  private server: Server | undefined;
  private readonly hung: ServerResponse[] = [];
  url = '';
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedRequest = {
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const answer = this.answer(received, this.received.length);
        this.received.push(received);
        if (answer === 'hang') {
          this.hung.push(response);
          return;
        }
        response.writeHead(answer.status, answer.headers).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    this.url = `http://127.0.0.1:${this.port}/hooks`;
  }

  /** The requests whose body has this event type. */
  ofType(type: string): ReceivedRequest[] {
    return this.received.filter((r) => JSON.parse(r.body).type === type);
  }

  async stop(): Promise<void> {
    for (const response of this.hung) {
      response.destroy();
    }
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
