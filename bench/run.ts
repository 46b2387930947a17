// `npm run bench`: the bare node:http yardstick and Haven (embedded database, in memory),
// each in its own process, loaded in turn by autocannon from this one. Figures are ratios
// to bare in the same run, so they mean the same on any machine. Never part of `npm test`.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import autocannon from 'autocannon';

interface Row {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

async function call(url: string, init: RequestInit & { json?: unknown } = {}) {
  const res = await fetch(url, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
  if (!res.ok) {
    throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  }
  return (await res.json()) as Record<string, string>;
}

/** Credentials made through the API, as a developer would: a session, an org, a key. */
async function credentials(base: string) {
  const session = await call(`${base}/api/v1/sandbox/session-token`, { method: 'POST', json: {} });
  const auth = { authorization: `Bearer ${session.access_token}` };
  const org = await call(`${base}/api/v1/developers/orgs`, {
    method: 'POST',
    headers: auth,
    json: { name: 'Bench Org' },
  });
  const key = await call(`${base}/api/v1/developers/orgs/${org.id}/keys`, {
    method: 'POST',
    headers: auth,
    json: { name: 'bench', environment: 'test' },
  });
  return { session: auth, key: { authorization: `Bearer ${key.key}` } };
}

/** Later capabilities add their hot routes here. */
function rows(auth: Awaited<ReturnType<typeof credentials>>): Row[] {
  return [
    { name: 'GET /health', path: '/health' },
    { name: 'GET /api/v1/auth/me (session JWT)', path: '/api/v1/auth/me', headers: auth.session },
    {
      name: 'GET /api/v1/developer/families (API key)',
      path: '/api/v1/developer/families',
      headers: auth.key,
    },
  ];
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROOT = new URL('..', import.meta.url).pathname;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startServer(args: string[], env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) {
        return { child, url: `http://127.0.0.1:${port}` };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      throw new Error(`${args.join(' ')} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(url: string, row: Row): Promise<Figures> {
  const result = await autocannon({
    url: `${url}${row.path}`,
    method: row.method ?? 'GET',
    headers: row.headers,
    body: row.body,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const bare = await startServer(['bench/bare-server.mjs'], {});
const haven = await startServer(['dist/main.js'], {
  DATA_DIR: 'memory',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
});
try {
  const lines = [
    `Haven bench: ${CONNECTIONS} connections, ${SECONDS} s per row, node ${process.version}`,
    '',
    '| route | bare req/s | Haven req/s | vs bare | Haven p50 ms | Haven p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows(await credentials(haven.url))) {
    // Warm both (JIT, caches) before measuring.
    await autocannon({ url: `${bare.url}${row.path}`, duration: 1, connections: CONNECTIONS });
    await autocannon({
      url: `${haven.url}${row.path}`,
      headers: row.headers,
      duration: 1,
      connections: CONNECTIONS,
    });
    const yardstick = await load(bare.url, { ...row, path: row.path });
    const figures = await load(haven.url, row);
    const ratio = ((figures.rps / yardstick.rps) * 100).toFixed(1);
    lines.push(
      `| ${row.name} | ${Math.round(yardstick.rps)} | ${Math.round(figures.rps)} | ${ratio} % | ${figures.p50} | ${figures.p99} | ${figures.non2xx} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all([stop(bare.child), stop(haven.child)]);
}
