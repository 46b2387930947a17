// haven_http_requests_total and haven_http_request_duration_seconds, kept as plain numbers and
// turned into prom-client's form only when scraped. Every answered request records into them,
// on the fast paths too, so recording must cost next to nothing: prom-client's own children
// validate and hash their labels on every inc() and observe() (~1 µs a request for the pair,
// measured in a loop; the trust list's 304 costs ~21 µs of CPU in all), while a lookup in two
// maps and a few increments cost a tenth of that. A scrape builds the values from these
// tallies, a few hundred series at most (a series per route and method, a count per status).
import type { Metric, Registry } from 'prom-client';
import { endpointPattern } from '../modules/usage/recorder.js';

interface RouteSeries {
  /**
   * `{method, route}`: one object for the series' life, so prom-client formats it once
   * (it caches a value's `sharedLabels` by object) instead of once per bucket per scrape.
   */
  labels: { method: string; route: string };
  byStatus: Map<number, number>;
  /** Observations per bucket, not cumulative (the last one is +Inf). */
  buckets: number[];
  sum: number;
  count: number;
}

interface ExposedValue {
  value: number;
  /** The value's own labels; a histogram's series' are in sharedLabels. */
  labels: Record<string, string | number>;
  sharedLabels?: RouteSeries['labels'];
  metricName?: string;
}

/**
 * A metric prom-client's registry can expose (the structural part of its Metric it reads):
 * the text exposition reads getForPromString(), the JSON one get(), as for its histograms.
 */
function exposed(
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  values: () => ExposedValue[],
): Metric {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    getForPromString: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    get: async () => ({
      name,
      help,
      type,
      aggregator: 'sum',
      values: values().map(({ value, labels, sharedLabels, metricName }) => ({
        value,
        labels: { ...labels, ...sharedLabels },
        metricName,
      })),
    }),
    reset() {},
  };
  return metric as unknown as Metric;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function createRequestSeries(
  registry: Registry,
  names: { requests: string; duration: string },
  bounds: readonly number[],
) {
  /** By the method as received (Node's parser knows a fixed list), then by route. */
  const byMethod = new Map<string, Map<string, RouteSeries>>();
  const all: RouteSeries[] = [];

  function routesOf(method: string): Map<string, RouteSeries> {
    let routes = byMethod.get(method);
    if (routes === undefined) {
      // Methods beyond the usual ones share one label (and one map).
      const label = KNOWN_METHODS.has(method) ? method : 'OTHER';
      routes = byMethod.get(label) ?? new Map();
      byMethod.set(label, routes);
      byMethod.set(method, routes);
    }
    return routes;
  }

  function seriesOf(method: string, route: string): RouteSeries {
    const routes = routesOf(method);
    let series = routes.get(route);
    if (series === undefined) {
      series = {
        labels: {
          method: KNOWN_METHODS.has(method) ? method : 'OTHER',
          // As the OpenAPI document and the usage rows name it: one route, one name.
          route: endpointPattern(route),
        },
        byStatus: new Map(),
        buckets: new Array(bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      routes.set(route, series);
      all.push(series);
    }
    return series;
  }

  registry.registerMetric(
    exposed(
      names.requests,
      'Requests answered, by method, route pattern and status (499: the client went away first).',
      'counter',
      () =>
        all.flatMap((s) =>
          [...s.byStatus].map(([status, value]) => ({
            value,
            labels: { method: s.labels.method, route: s.labels.route, status },
          })),
        ),
    ),
  );
  registry.registerMetric(
    exposed(
      names.duration,
      'Time from a request arriving to its answer being written, by method and route pattern.',
      'histogram',
      () => {
        const bucket = `${names.duration}_bucket`;
        const values: ExposedValue[] = [];
        for (const s of all) {
          const sharedLabels = s.labels;
          let cumulative = 0;
          for (let at = 0; at < bounds.length; at++) {
            cumulative += s.buckets[at] ?? 0;
            values.push({
              value: cumulative,
              labels: { le: bounds[at] as number },
              sharedLabels,
              metricName: bucket,
            });
          }
          values.push(
            { value: s.count, labels: { le: '+Inf' }, sharedLabels, metricName: bucket },
            { value: s.sum, labels: {}, sharedLabels, metricName: `${names.duration}_sum` },
            { value: s.count, labels: {}, sharedLabels, metricName: `${names.duration}_count` },
          );
        }
        return values;
      },
    ),
  );

  return {
    /** One answered request: a count by status and an observation of its duration. */
    record(method: string, route: string, status: number, seconds: number): void {
      const series = seriesOf(method, route);
      series.byStatus.set(status, (series.byStatus.get(status) ?? 0) + 1);
      let at = 0;
      while (at < bounds.length && seconds > (bounds[at] as number)) {
        at++;
      }
      series.buckets[at] = (series.buckets[at] ?? 0) + 1;
      series.sum += seconds;
      series.count++;
    },
  };
}
