// Runs an operator command (`dist/cli/<name>.js`, built by the global setup), or node with
// other arguments, as its own process, the way `npm run` would, with only the environment
// given (plus PATH), and collects what it printed.
import { spawn } from 'node:child_process';

const ROOT = new URL('..', import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs node with `args` from the repository root, with only `env` (plus PATH). */
export function runNode(args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn(process.execPath, args, {
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

export function runCli(
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  return runNode([`dist/cli/${name}.js`, ...args], env);
}
