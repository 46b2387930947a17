// OpenTelemetry traces (CONTRACT.md §13), exported by OTLP/HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Spans are made
// by hand at the points Haven owns (a request, a job run, a partner call, a webhook
// delivery) rather than by the auto-instrumentations, which patch modules as they load and so
// need a loader hook in front of an ES-module process; docs/decisions.md "Spans made where
// Haven does the work".
//
// Unset, `createTracing` returns the disabled tracing: every call below is a branch on
// `enabled` or the API's non-recording span, with no exporter, no processor and no context
// manager installed.
import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  type Span,
  type SpanAttributes,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export type OtlpProtocol = 'http/json' | 'http/protobuf';

/** Read from the standard OTEL_* variables by config.ts. */
export interface TracingSettings {
  /** The traces URL itself (`…/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  serviceName: string;
  /** How long spans wait to be batched (OTEL_BSP_SCHEDULE_DELAY; tests shorten it). */
  exportDelayMs?: number;
}

/** A carrier of a trace across processes: the W3C headers, as a job's data holds them. */
export type TraceCarrier = { traceparent?: string; tracestate?: string };

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get(carrier: Record<string, unknown>, key: string): string | undefined {
    const value = carrier[key];
    return Array.isArray(value) ? value[0] : typeof value === 'string' ? value : undefined;
  },
};
const headerSetter = {
  set(carrier: Record<string, unknown>, key: string, value: string) {
    carrier[key] = value;
  },
};

let contextManagerInstalled = false;
/** One per process, shared by every app in it (tests build several). */
function installContextManager(): void {
  if (!contextManagerInstalled) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerInstalled = true;
  }
}

export interface Tracing {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** The context an incoming request's (or a job's) W3C headers name, or the root context. */
  extract(carrier: Record<string, unknown>): Context;
  /** Writes `traceparent` (and `tracestate`) of the active span into outgoing headers. */
  inject(headers: Record<string, string>): void;
  /** The active trace as a job's data carries it; empty when tracing is off. */
  carrier(): TraceCarrier;
  /**
   * Runs `work` inside a new span (a child of `parent`, else of the active span), ending it
   * when `work` settles and marking it an error if `work` throws.
   */
  inSpan<T>(
    name: string,
    options: { kind: SpanKind; attributes?: SpanAttributes; parent?: Context },
    work: (span: Span) => Promise<T>,
  ): Promise<T>;
  /** Sends what is batched and stops the exporter. */
  shutdown(): Promise<void>;
}

const disabled: Tracing = {
  enabled: false,
  tracer: trace.getTracer('haven'),
  extract: () => context.active(),
  inject: () => {},
  carrier: () => ({}),
  inSpan: (_name, _options, work) => work(trace.wrapSpanContext(INVALID_SPAN_CONTEXT)),
  shutdown: async () => {},
};

export function createTracing(settings: TracingSettings | undefined): Tracing {
  if (!settings) {
    return disabled;
  }
  installContextManager();
  const Exporter = settings.protocol === 'http/json' ? JsonTraceExporter : ProtobufTraceExporter;
  const provider = new BasicTracerProvider({
    resource: detectResources({ detectors: [envDetector] }).merge(
      resourceFromAttributes({ 'service.name': settings.serviceName }),
    ),
    spanProcessors: [
      new BatchSpanProcessor(new Exporter({ url: settings.url }), {
        ...(settings.exportDelayMs === undefined
          ? {}
          : { scheduledDelayMillis: settings.exportDelayMs }),
      }),
    ],
  });
  const tracer = provider.getTracer('haven');

  return {
    enabled: true,
    tracer,
    extract: (carrier) => propagator.extract(context.active(), carrier, headerGetter),
    inject(headers) {
      propagator.inject(context.active(), headers, headerSetter);
    },
    carrier() {
      const carrier: TraceCarrier = {};
      propagator.inject(context.active(), carrier, headerSetter);
      return carrier;
    },
    inSpan(name, options, work) {
      const parent = options.parent ?? context.active();
      const span = tracer.startSpan(
        name,
        { kind: options.kind, attributes: options.attributes },
        parent,
      );
      return context.with(trace.setSpan(parent, span), async () => {
        try {
          return await work(span);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    shutdown: () => provider.shutdown(),
  };
}

export { SpanKind, SpanStatusCode };
