// The migration step brings a database installed earlier up to date: queues created with other
// settings (pg-boss's createQueue leaves an existing queue as it was) get the current ones,
// and the index the reaper reads is made.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/database.js';
import { installJobSchema, JOBS_SCHEMA } from './install.js';
import { QUEUE_SETTINGS } from './queues.js';

describe('job schema install', () => {
  let database: TestDatabase | undefined;

  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it('updates the settings of existing queues and makes the active-job index', async () => {
    database = await createTestDatabase();
    const { db } = database.handle;
    // Installed with other settings (an earlier version's), and without the index.
    await sql`update ${sql.table(`${JOBS_SCHEMA}.queue`)}
      set retry_limit = 1, retry_delay = 1, retry_backoff = false, expire_seconds = 60`.execute(db);
    await sql.raw(`drop index if exists ${JOBS_SCHEMA}.haven_job_active`).execute(db);

    await installJobSchema(db);

    const queues = await sql<{
      name: keyof typeof QUEUE_SETTINGS;
      retryLimit: number;
      retryDelay: number;
      retryBackoff: boolean;
      expireInSeconds: number;
    }>`
      select name, retry_limit as "retryLimit", retry_delay as "retryDelay",
        retry_backoff as "retryBackoff", expire_seconds as "expireInSeconds"
      from ${sql.table(`${JOBS_SCHEMA}.queue`)} order by name`.execute(db);
    expect(
      Object.fromEntries(queues.rows.map(({ name, ...settings }) => [name, settings])),
    ).toEqual(QUEUE_SETTINGS);
    const index = await sql<{ found: boolean }>`
      select to_regclass(${`${JOBS_SCHEMA}.haven_job_active`}) is not null as found`.execute(db);
    expect(index.rows[0]?.found).toBe(true);
  });
});
