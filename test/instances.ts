// Two app instances on one PostgreSQL database (separate pools, as two processes would
// have), for tests of what instances share: Redis buckets, invalidations.
import { buildTestApp, type TestApp } from './app.js';
import type { TestClock } from './clock.js';
import { createTestDatabase } from './database.js';

export async function withTwoInstances(
  options: { clock: TestClock; env: Record<string, string> },
  run: (a: TestApp, b: TestApp) => Promise<void>,
): Promise<void> {
  const database = await createTestDatabase();
  const secondHandle = database.reopen?.();
  if (!secondHandle) {
    throw new Error('two instances need a PostgreSQL test database');
  }
  const a = await buildTestApp({ database, ...options });
  const b = await buildTestApp({ database: { ...database, handle: secondHandle }, ...options });
  try {
    await run(a, b);
  } finally {
    await a.app.close();
    await b.app.close();
    await secondHandle.close();
    await database.drop();
  }
}
