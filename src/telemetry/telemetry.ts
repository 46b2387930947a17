// What a process tells its operator beyond its log lines: Prometheus metrics and, when an
// OTLP endpoint is configured, OpenTelemetry traces (CONTRACT.md §13). One per process
// (API or worker), handed to the app and to the services that record into it.
import type { Config } from '../config.js';
import { createMetrics, type Metrics, type MetricsOptions } from './metrics.js';
import { createTracing, type Tracing } from './tracing.js';

export interface Telemetry {
  metrics: Metrics;
  tracing: Tracing;
}

export function createTelemetry(
  config: Pick<Config, 'tracing'>,
  options: { metrics?: MetricsOptions } = {},
): Telemetry {
  return {
    metrics: createMetrics(options.metrics),
    tracing: createTracing(config.tracing),
  };
}
