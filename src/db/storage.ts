// Opening the configured storage the same way for the server and for operator commands:
// the DATA_DIR lock first (embedded storage has one owner), then the database, then
// migrations.
import type { Config } from '../config.js';
import { connectDatabase, type DatabaseHandle } from './connect.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { migrate } from './migrate.js';

export interface Storage {
  database: DatabaseHandle;
  description: string;
  /** Versions applied by this open. */
  applied: string[];
  onIdleError(listener: (error: Error) => void): void;
  close(): Promise<void>;
}

export async function openStorage(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  options: { migrate?: boolean } = {},
): Promise<Storage> {
  const embeddedOnDisk = !config.databaseUrl && config.dataDir !== 'memory';
  const lock: DataDirLock | undefined = embeddedOnDisk
    ? acquireDataDirLock(config.dataDir)
    : undefined;
  let idleListener: (error: Error) => void = () => {};
  try {
    const database = await connectDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      onIdleError: (error) => idleListener(error),
    });
    const applied = options.migrate === false ? [] : await migrate(database.db);
    return {
      database,
      applied,
      description: config.databaseUrl
        ? 'postgresql'
        : config.dataDir === 'memory'
          ? 'embedded (in memory)'
          : `embedded (${config.dataDir})`,
      onIdleError: (listener) => {
        idleListener = listener;
      },
      close: async () => {
        await database.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}
