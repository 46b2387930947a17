// Once per `npm test`: migrate a template database that every test file clones.
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { connectPostgres, pgliteParsers, wrapPGlite } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { databaseUrlFor, type TemplateInfo, withAdminClient } from './postgres-admin.js';

let cleanup: (() => Promise<void>) | undefined;

export async function setup(project: TestProject): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  let info: TemplateInfo;
  if (adminUrl) {
    const template = `haven_tpl_${process.pid}`;
    await withAdminClient(adminUrl, async (client) => {
      await client.query(`drop database if exists ${template} with (force)`);
      await client.query(`create database ${template}`);
    });
    const handle = connectPostgres(databaseUrlFor(adminUrl, template));
    await migrate(handle.db);
    await handle.close();
    info = { backend: 'postgres', adminUrl, template };
    cleanup = () =>
      withAdminClient(adminUrl, async (client) => {
        const { rows } = await client.query<{ datname: string }>(
          `select datname from pg_database where datname like $1 or datname = $2`,
          [`haven_t_%`, template],
        );
        for (const { datname } of rows) {
          if (datname === template || datname.startsWith('haven_t_')) {
            await client.query(`drop database if exists ${datname} with (force)`);
          }
        }
      });
    process.stdout.write(`[haven tests] database: PostgreSQL (template ${template})\n`);
  } else {
    const pglite = await PGlite.create({ parsers: pgliteParsers });
    const handle = wrapPGlite(pglite);
    await migrate(handle.db);
    const dump = await pglite.dumpDataDir('none');
    const dumpPath = join(tmpdir(), `haven-template-${process.pid}.tar`);
    await writeFile(dumpPath, Buffer.from(await dump.arrayBuffer()));
    await handle.close();
    info = { backend: 'pglite', dumpPath };
    cleanup = () => rm(dumpPath, { force: true });
    process.stdout.write('[haven tests] database: embedded PGlite (template dump)\n');
  }
  project.provide('databaseTemplate', info);
}

export async function teardown(): Promise<void> {
  await cleanup?.();
}
