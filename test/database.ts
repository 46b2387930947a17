// Clean databases for tests: each test file gets its own, cloned from a template migrated
// once per run (PostgreSQL: CREATE DATABASE … TEMPLATE; PGlite: a dumped data directory).
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { LogEvent } from 'kysely';
import { inject } from 'vitest';
import {
  connectPostgres,
  type DatabaseHandle,
  pgliteParsers,
  wrapPGlite,
} from '../src/db/connect.js';
import { databaseUrlFor, type TemplateInfo, withAdminClient } from './postgres-admin.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate: TemplateInfo;
    /** A migrated embedded data directory (global setup); copy it, never write it. */
    migratedDataDir: string;
  }
}

/**
 * A new DATA_DIR for a server process, already initialised and migrated as a first start
 * would leave it (a copy of the template made once per run): what a first start costs
 * (seconds of initdb) is paid once per run instead of once per process. Remove it after.
 */
export function newDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `haven-${prefix}-`));
  cpSync(inject('migratedDataDir'), dir, { recursive: true });
  return dir;
}

export interface TestDatabase {
  handle: DatabaseHandle;
  /** Opens a second, independent handle on the same database (PostgreSQL only). */
  reopen?: () => DatabaseHandle;
  url?: string;
  drop(): Promise<void>;
}

let pgliteDump: Blob | undefined;

/**
 * An embedded database as initdb leaves it, nothing migrated (for tests of the migrations
 * themselves): loaded from a dump made once per run, on either backend's run.
 */
export async function createBlankPGlite(): Promise<DatabaseHandle> {
  const template = inject('databaseTemplate');
  if (template.backend !== 'pglite') {
    return wrapPGlite(await PGlite.create({ parsers: pgliteParsers }));
  }
  const blank = new Blob([await readFile(template.blankPath)]);
  return wrapPGlite(await PGlite.create({ loadDataDir: blank, parsers: pgliteParsers }));
}

export interface TestDatabaseOptions {
  /** Sees the text of every statement the app's handle sends (round-trip counts). */
  onStatement?: (sql: string) => void;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const template = inject('databaseTemplate');
  const onStatement = options.onStatement;
  const log = onStatement
    ? (event: LogEvent) => {
        onStatement(event.query.sql);
      }
    : undefined;
  if (template.backend === 'pglite') {
    pgliteDump ??= new Blob([await readFile(template.dumpPath)]);
    const pglite = await PGlite.create({ loadDataDir: pgliteDump, parsers: pgliteParsers });
    const handle = wrapPGlite(pglite, { log });
    return { handle, drop: () => handle.close() };
  }
  // Named after the run (its template), so a run's cleanup drops its own databases only,
  // never those of another run on the same server (a second suite, CI beside a developer).
  const run = template.template.replace('haven_tpl_', '');
  const name = `haven_t_${run}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(template.adminUrl, async (client) => {
    // Concurrent clones of one template can briefly collide; a short retry settles it.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`create database ${name} template ${template.template}`);
        return;
      } catch (error) {
        if (attempt >= 20 || !/being accessed by other users/.test(String(error))) {
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 + attempt * 50));
      }
    }
  });
  const url = databaseUrlFor(template.adminUrl, name);
  const handle = connectPostgres(url, { log });
  return {
    handle,
    url,
    reopen: () => connectPostgres(url),
    drop: async () => {
      await handle.close();
      await withAdminClient(template.adminUrl, (client) =>
        client.query(`drop database if exists ${name} with (force)`),
      );
    },
  };
}
