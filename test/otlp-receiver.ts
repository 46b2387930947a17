// An OpenTelemetry collector's front door for tests: OTLP/HTTP with JSON bodies
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) on POST /v1/traces, every span kept flattened with
// its resource's service name and its attributes as a plain object.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: Array<{ key: string; value: AnyValue }>;
  status?: { code?: number; message?: string };
  links?: Array<{ traceId: string; spanId: string }>;
}

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  links: Array<{ traceId: string; spanId: string }>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

function plainValue(value: AnyValue): string | number | boolean {
  if (value.intValue !== undefined) {
    return Number(value.intValue);
  }
  return value.stringValue ?? value.doubleValue ?? value.boolValue ?? '';
}

function attributesOf(list: Array<{ key: string; value: AnyValue }> | undefined) {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Bodies that were not OTLP JSON (a protobuf export, say): the test should fail on them. */
  readonly rejected: string[] = [];
  private server: Server | undefined;

  /** Listens on a free port; resolves with the base URL to put in OTEL_EXPORTER_OTLP_ENDPOINT. */
  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (
          request.method !== 'POST' ||
          request.url !== '/v1/traces' ||
          !String(request.headers['content-type']).startsWith('application/json')
        ) {
          this.rejected.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
          response.writeHead(415).end();
          return;
        }
        try {
          this.accept(JSON.parse(body));
        } catch (error) {
          this.rejected.push(String(error));
          response.writeHead(400).end();
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  private accept(payload: {
    resourceSpans?: Array<{
      resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
      scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
    }>;
  }): void {
    for (const resourceSpans of payload.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            statusCode: span.status?.code ?? 0,
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          });
        }
      }
    }
  }

  /** Polls (with a deadline, no fixed sleep) until `found` holds for the spans received. */
  async waitFor<T>(
    found: (spans: ReceivedSpan[]) => T | undefined | false,
    what: string,
    timeoutMs = 20_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = found(this.spans);
      if (result) {
        return result;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `no ${what} within ${timeoutMs} ms; received: ${this.spans.map((s) => s.name).join(', ')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** Tracing settings for an app under test that exports to `receiver` at once. */
export function tracingEnv(endpoint: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  };
}
