// Embedded storage belongs to one process at a time (CONTRACT.md §1). The holder writes its
// pid into DATA_DIR/haven.lock; a holder whose pid is gone, or is a zombie, holds nothing.
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(
      `the embedded database in ${dataDir} is in use by process ${holderPid}; stop the server first`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  release(): void;
}

const LOCK_FILE = 'haven.lock';

/** Alive means it exists and is not a zombie (dead processes may linger as zombies). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) {
    return false;
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat is "pid (comm) state ..."; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No procfs (not Linux): the signal check above is all there is.
    return true;
  }
}

function readHolder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isNaN(pid) ? 0 : pid;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined;
    }
    throw error;
  }
}

function tryCreate(path: string, pid: number): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, `${pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      return false;
    }
    throw error;
  }
}

export function acquireDataDirLock(dataDir: string, pid: number = process.pid): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (tryCreate(path, pid)) {
      return {
        release: () => {
          if (readHolder(path) === pid) {
            rmSync(path, { force: true });
          }
        },
      };
    }
    const holder = readHolder(path);
    if (holder === undefined) {
      continue; // released between our two looks: try again
    }
    if (holder === pid || isProcessAlive(holder)) {
      throw new DataDirLockedError(dataDir, holder);
    }
    // Stale: move it aside (atomic) rather than delete it. If what we moved turns out to be
    // a fresh lock another taker wrote meanwhile, put it back (link fails if a third exists).
    const aside = `${path}.stale-${pid}`;
    try {
      renameSync(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        continue;
      }
      throw error;
    }
    if (readHolder(aside) !== holder) {
      try {
        linkSync(aside, path);
      } catch {
        // Someone else holds it now; the next round reports them.
      }
    }
    rmSync(aside, { force: true });
  }
  throw new Error(`could not take the lock on ${dataDir}`);
}
