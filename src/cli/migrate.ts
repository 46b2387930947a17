// `npm run migrate`: applies pending migrations to the configured storage and exits.
import { ConfigError, loadConfig } from '../config.js';
import { openStorage } from '../db/storage.js';

try {
  const storage = await openStorage(loadConfig());
  process.stdout.write(
    storage.applied.length > 0
      ? `applied migrations ${storage.applied.join(', ')} (${storage.description})\n`
      : `migrations up to date (${storage.description})\n`,
  );
  await storage.close();
} catch (error) {
  process.stderr.write(
    `haven migrate: ${error instanceof ConfigError ? error.message : (error as Error).message}\n`,
  );
  process.exit(1);
}
