import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError, isProcessAlive } from './data-dir-lock.js';

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

async function pollUntil(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('DATA_DIR lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'haven-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one holder in and tells the next to stop the server first', () => {
    const lock = acquireDataDirLock(dir, process.pid);
    expect(readFileSync(join(dir, 'haven.lock'), 'utf8').trim()).toBe(String(process.pid));
    expect(() => acquireDataDirLock(dir, 999_999)).toThrow(DataDirLockedError);
    expect(() => acquireDataDirLock(dir, 999_999)).toThrow(/stop the server first/);
    lock.release();
    expect(existsSync(join(dir, 'haven.lock'))).toBe(false);
    acquireDataDirLock(dir, 999_999).release();
  });

  it('takes over the lock of a process that is gone', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid ?? 0;
    await new Promise((resolve) => child.on('exit', resolve));
    expect(isProcessAlive(pid)).toBe(false);
    writeFileSync(join(dir, 'haven.lock'), `${pid}\n`);
    const lock = acquireDataDirLock(dir, process.pid);
    expect(readFileSync(join(dir, 'haven.lock'), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
  });

  it('takes over the lock of a zombie', async () => {
    // `sh` starts a child, prints its pid and becomes `sleep`, which never reaps: when the
    // child exits (after the exec, hence its short pause) it lingers as a zombie.
    const parent = spawn('sh', ['-c', '(sleep 0.3; exit 0) & echo $!; exec sleep 30']);
    try {
      const zombie = await new Promise<number>((resolve) =>
        parent.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))),
      );
      await pollUntil(() => processState(zombie) === 'Z', `process ${zombie} to become a zombie`);
      expect(isProcessAlive(zombie)).toBe(false);
      writeFileSync(join(dir, 'haven.lock'), `${zombie}\n`);
      const lock = acquireDataDirLock(dir, process.pid);
      lock.release();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('treats a live process as the holder', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    writeFileSync(join(dir, 'haven.lock'), `${process.pid}\n`);
    expect(() => acquireDataDirLock(dir, 12345)).toThrow(DataDirLockedError);
  });
});
