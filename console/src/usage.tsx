// Usage of the selected org: requests per day (or per hour for one day) as a bar chart,
// for 1-90 days, all keys or one.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { Empty, ErrorText, type OnSignedOut, Section, useAction } from './ui.js';

type Row = Result<'getDeveloperUsage'>[number];
type Key = Result<'listApiKeys'>[number];

const WIDTH = 640;
const HEIGHT = 160;

/**
 * Totals per bucket (an hour for a one-day window, else a day), oldest first, every bucket
 * of the window present (zero when quiet). The window ends at the latest count (the server's
 * clock), or now.
 */
function buckets(rows: Row[], days: number): Array<{ label: string; total: number }> {
  const hourly = days === 1;
  const keyOf = (iso: string) => (hourly ? iso.slice(0, 13) : iso.slice(0, 10));
  const sums = new Map<string, number>();
  for (const row of rows) {
    sums.set(keyOf(row.hour), (sums.get(keyOf(row.hour)) ?? 0) + row.total_requests);
  }
  const latest = rows.reduce((max, row) => (row.hour > max ? row.hour : max), '');
  const end = latest ? new Date(latest).getTime() : Date.now();
  const step = hourly ? 3_600_000 : 86_400_000;
  const count = hourly ? 24 : days;
  return Array.from({ length: count }, (_, i) => {
    const key = keyOf(new Date(end - (count - 1 - i) * step).toISOString());
    return { label: hourly ? `${key.slice(11, 13)}:00` : key.slice(5), total: sums.get(key) ?? 0 };
  });
}

function Chart(props: { data: Array<{ label: string; total: number }>; title: string }) {
  const max = Math.max(1, ...props.data.map((d) => d.total));
  const width = WIDTH / Math.max(1, props.data.length);
  return (
    <svg role="img" aria-label={props.title} viewBox={`0 0 ${WIDTH} ${HEIGHT + 20}`} class="chart">
      {props.data.map((point, i) => {
        const height = (point.total / max) * HEIGHT;
        return (
          <g key={point.label}>
            <rect
              x={i * width + 2}
              y={HEIGHT - height}
              width={Math.max(1, width - 4)}
              height={height}
              class="bar"
            >
              <title>{`${point.label}: ${point.total} requests`}</title>
            </rect>
            <text x={i * width + width / 2} y={HEIGHT + 14} class="tick">
              {props.data.length > 31 && i % 7 !== 0 ? '' : point.label}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function Usage(props: { haven: Haven; orgId: string; onSignedOut: OnSignedOut }) {
  const { haven, orgId } = props;
  const [days, setDays] = useState(7);
  const [keyId, setKeyId] = useState('');
  const [rows, setRows] = useState<Row[] | null>(null);
  const [keys, setKeys] = useState<Key[]>([]);
  const { error, run } = useAction(props.onSignedOut);
  const load = () =>
    run(async () => {
      const [usage, listed] = await Promise.all([
        haven.usage.get(orgId, { days, ...(keyId ? { key_id: keyId } : {}) }),
        haven.apiKeys.list(orgId),
      ]);
      setRows(usage);
      setKeys(listed);
    });
  useEffect(() => void load(), [orgId, days, keyId]);
  const data = rows && rows.length > 0 ? buckets(rows, days) : [];
  const total = data.reduce((sum, d) => sum + d.total, 0);
  return (
    <Section title="Usage" id="usage">
      <form class="inline" onSubmit={(event) => event.preventDefault()}>
        <label for="usage-days">Window</label>
        <select
          id="usage-days"
          value={String(days)}
          onChange={(event) => setDays(Number((event.target as HTMLSelectElement).value))}
        >
          {[1, 7, 30, 90].map((d) => (
            <option key={d} value={String(d)}>
              {d === 1 ? 'last day (hourly)' : `last ${d} days`}
            </option>
          ))}
        </select>
        <label for="usage-key">Key</label>
        <select
          id="usage-key"
          value={keyId}
          onChange={(event) => setKeyId((event.target as HTMLSelectElement).value)}
        >
          <option value="">all keys</option>
          {keys.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </form>
      <ErrorText error={error} />
      {rows === null ? (
        <p class="loading">Loading usage…</p>
      ) : data.length === 0 ? (
        <Empty>No request in this window yet (counts are written every few seconds).</Empty>
      ) : (
        <>
          <p>{total} requests in the window.</p>
          <Chart data={data} title={days === 1 ? 'Requests per hour' : 'Requests per day'} />
        </>
      )}
    </Section>
  );
}
