// `npm run bench -- --soak [seconds]`: a long mixed load on one Haven process, reporting its
// resident memory before, during and after. Every request comes from a new client address
// and the anonymous rows cycle through thousands of sandbox sessions, so every per-caller
// structure (rate-limit buckets, session caches, key caches, batched last-seen and usage)
// is filled past its bound: a leak shows as RSS that keeps climbing round after round
// instead of levelling off.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { clientAddress } from './client-address.js';

export interface SoakTarget {
  url: string;
  pid: number;
  apiKey: Record<string, string>;
  deviceKeys: string[];
  deviceEtag: string;
}

interface SoakRow {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Rotates through these values in this header, one per request. */
  rotate?: { header: string; values: string[] };
}

/** Fewer than SANDBOX_MAX_SESSIONS (10 000 by default): each is created once, then reused. */
const SANDBOX_SESSIONS = 5_000;
const ROUNDS = 10;
const MIB = 1024 * 1024;

function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kib) {
    throw new Error(`no VmRSS for process ${pid}`);
  }
  return Number(kib) * 1024;
}

function soakRows(target: SoakTarget): SoakRow[] {
  const sessions = Array.from({ length: SANDBOX_SESSIONS }, (_, i) => `soak-${i}`);
  return [
    { name: 'API key, catalog', path: '/api/v1/developer/platforms', headers: target.apiKey },
    { name: 'API key, families', path: '/api/v1/developer/families', headers: target.apiKey },
    {
      name: 'sandbox sessions, families',
      path: '/api/v1/families',
      rotate: { header: 'x-sandbox-session', values: sessions },
    },
    {
      name: 'device policy, 304',
      path: '/api/v1/device/policy',
      headers: { 'if-none-match': target.deviceEtag },
      rotate: { header: 'x-device-key', values: target.deviceKeys },
    },
    {
      name: 'quick setup (writes)',
      method: 'POST',
      path: '/api/v1/developer/setup/quick',
      headers: { ...target.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ child_name: 'Soak Kid', birth_date: '2016-05-01' }),
    },
  ];
}

let clientCounter = 0;

async function run(url: string, row: SoakRow, seconds: number, connections: number) {
  let next = 0;
  const result = await autocannon({
    url: `${url}${row.path}`,
    method: row.method ?? 'GET',
    headers: row.headers,
    body: row.body,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          clientCounter++;
          const headers: Record<string, string> = {
            ...(request.headers as Record<string, string>),
            'x-forwarded-for': clientAddress(clientCounter),
          };
          if (row.rotate) {
            headers[row.rotate.header] = row.rotate.values[
              next++ % row.rotate.values.length
            ] as string;
          }
          request.headers = headers;
          return request;
        },
      },
    ],
  });
  return {
    requests: result.requests.total,
    errors: result.errors + result['5xx'],
  };
}

/** Runs the soak and returns the report's lines. */
export async function soak(
  target: SoakTarget,
  seconds: number,
  connections: number,
): Promise<string[]> {
  const rows = soakRows(target);
  const slice = Math.max(1, Math.round(seconds / ROUNDS / rows.length));
  // Warm up (JIT, first session creations) before the first reading.
  for (const row of rows) {
    await run(target.url, row, 1, connections);
  }
  const before = residentBytes(target.pid);
  const lines = [
    `Haven soak: ${ROUNDS} rounds of ${rows.length} rows x ${slice} s, ${connections} connections, a new client address per request, node ${process.version}`,
    '',
    '| round | requests | 5xx / errors | RSS MiB |',
    '|---:|---:|---:|---:|',
    `| before | | | ${(before / MIB).toFixed(1)} |`,
  ];
  let total = 0;
  let peak = before;
  for (let round = 1; round <= ROUNDS; round++) {
    let requests = 0;
    let errors = 0;
    for (const row of rows) {
      const figures = await run(target.url, row, slice, connections);
      requests += figures.requests;
      errors += figures.errors;
    }
    total += requests;
    const rss = residentBytes(target.pid);
    peak = Math.max(peak, rss);
    lines.push(`| ${round} | ${requests} | ${errors} | ${(rss / MIB).toFixed(1)} |`);
  }
  const after = residentBytes(target.pid);
  lines.push(
    '',
    `RSS before ${(before / MIB).toFixed(1)} MiB, after ${(after / MIB).toFixed(1)} MiB (peak ${(peak / MIB).toFixed(1)} MiB) over ${total} requests from ${clientCounter} client addresses.`,
  );
  return lines;
}

/** `--soak` or `--soak <seconds>` on the command line; undefined when absent. */
export function soakSeconds(argv: string[]): number | undefined {
  const at = argv.indexOf('--soak');
  if (at === -1) {
    return undefined;
  }
  const given = Number(argv[at + 1]);
  return Number.isFinite(given) && given > 0 ? given : 600;
}
