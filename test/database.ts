// Clean databases for tests: each test file gets its own, cloned from a template migrated
// once per run (PostgreSQL: CREATE DATABASE … TEMPLATE; PGlite: a dumped data directory).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
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
  }
}

export interface TestDatabase {
  handle: DatabaseHandle;
  /** Opens a second, independent handle on the same database (PostgreSQL only). */
  reopen?: () => DatabaseHandle;
  url?: string;
  drop(): Promise<void>;
}

let pgliteDump: Blob | undefined;

export async function createTestDatabase(): Promise<TestDatabase> {
  const template = inject('databaseTemplate');
  if (template.backend === 'pglite') {
    pgliteDump ??= new Blob([await readFile(template.dumpPath)]);
    const pglite = await PGlite.create({ loadDataDir: pgliteDump, parsers: pgliteParsers });
    const handle = wrapPGlite(pglite);
    return { handle, drop: () => handle.close() };
  }
  const name = `haven_t_${process.pid}_${randomBytes(4).toString('hex')}`;
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
  const handle = connectPostgres(url);
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
