// Real processes for tests: the server, the worker, the operator commands, run from dist/
// as `npm start` and `npm run <command>` run them (the global setup builds it), with their
// output kept.
import { type ChildProcess, spawn } from 'node:child_process';

const ROOT = new URL('..', import.meta.url).pathname;

export interface RunningScript {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** `script`: the module under dist/ without extension (`main`, `worker`, `cli/migrate`). */
export function runScript(script: string, env: Record<string, string>): RunningScript {
  const child = spawn(process.execPath, [`dist/${script}.js`], {
    cwd: ROOT,
    // A worker's listener on a free port unless the test names one: workers of tests that
    // run at once must not meet on the default 8081.
    env: {
      PATH: process.env.PATH ?? '',
      ...(script === 'worker' ? { WORKER_PORT: '0' } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk) => {
    output.stdout += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output.stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

export async function waitForLine(
  running: Pick<RunningScript, 'child' | 'output'>,
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(running.output.stdout);
    if (match) {
      return match;
    }
    if (running.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(
        `no line matching ${pattern}; output:\n${running.output.stdout}\n${running.output.stderr}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts the server on a free port and resolves with its URL once it listens. */
export async function startServer(env: Record<string, string>) {
  const server = runScript('main', { PORT: '0', LOG_LEVEL: 'info', ...env });
  const [, url] = await waitForLine(server, /Haven listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return { ...server, url: url as string };
}

export type RunningServer = Awaited<ReturnType<typeof startServer>>;

/** The worker's line once it runs, naming where its metrics and probes answer. */
export const WORKER_RUNNING = /Haven worker running on (http:\/\/127\.0\.0\.1:\d+)/;

/** Starts `npm run worker` (its listener on a free port) and resolves with that listener's URL. */
export async function startWorker(env: Record<string, string>) {
  const worker = runScript('worker', { LOG_LEVEL: 'info', ...env });
  const [, url] = await waitForLine(worker, WORKER_RUNNING);
  return { ...worker, url: url as string };
}

/** SIGKILL, and wait until the process is gone. */
export async function killHard(running: RunningScript): Promise<void> {
  running.child.kill('SIGKILL');
  await running.exited;
}

/** JSON calls to a server process as one sandbox session (no credential). */
export function sandboxCaller(session: string) {
  const headers = { 'x-sandbox-session': session, 'content-type': 'application/json' };
  return async (url: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}
