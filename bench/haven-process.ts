// A built Haven (dist/main.js) started as its own process for a bench that compares builds
// or settings side by side (--audit-cost, --telemetry-cost), and a fresh PostgreSQL database
// for it.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import pg from 'pg';

const ROOT = new URL('..', import.meta.url).pathname;
const HAVEN = ['dist/main.js'];

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts Haven with `env` on a free port; resolves once /health answers 200. */
export async function startHaven(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, HAVEN, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/health`);
      await answer.arrayBuffer();
      if (answer.ok) {
        return { child, url: `http://127.0.0.1:${port}` };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      throw new Error('haven did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function stopHaven(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** A new empty database `name` on the server of `adminUrl`; undefined if it does not answer. */
export async function freshPostgres(adminUrl: string, name: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
