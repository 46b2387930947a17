// Runs an operator command (`dist/cli/<name>.js`, built by the global setup) as its own
// process, the way `npm run` would, with only the environment given (plus PATH), and
// collects what it printed.
import { spawn } from 'node:child_process';

const ROOT = new URL('..', import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  const child = spawn(process.execPath, [`dist/cli/${name}.js`, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}
