// Reads a Prometheus text exposition (GET /metrics) into samples, so a test can compare one
// scrape with the next: `value(name, labels)` sums the samples of `name` whose labels include
// the ones given (0 when there are none).
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = line.startsWith('#') ? null : SAMPLE.exec(line);
    if (!match) {
      continue;
    }
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) {
      labels[key as string] = (value as string).replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

export class MetricSnapshot {
  constructor(readonly samples: Sample[]) {}

  /** The samples of `name` whose labels include `labels`. */
  find(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  }

  /** The sum of those samples' values (0 when none). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.find(name, labels).reduce((sum, sample) => sum + sample.value, 0);
  }
}

/** One scrape of the app's GET /metrics (with the bearer token when one is set). */
export async function scrape(app: FastifyInstance, token?: string): Promise<MetricSnapshot> {
  const res = await app.inject({
    method: 'GET',
    url: '/metrics',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  expect(res.statusCode, res.body).toBe(200);
  return new MetricSnapshot(parseExposition(res.body));
}
