// Once per `npm test`: build the server as `npm start` does (tests that start real processes
// run dist/, as users do), migrate a template database that every test file clones, and a
// migrated data directory that tests starting embedded-storage processes copy.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { connectPostgres, pgliteParsers, wrapPGlite } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { databaseUrlFor, type TemplateInfo, withAdminClient } from './postgres-admin.js';

let cleanup: (() => Promise<void>) | undefined;
let removeDataDir: (() => Promise<void>) | undefined;

const ROOT = new URL('..', import.meta.url).pathname;

/**
 * The embedded database twice, from one engine started once: blank as initdb leaves it (for
 * the tests of migrations themselves) and migrated.
 */
async function pgliteDumps(): Promise<{ blank: Blob; migrated: Blob }> {
  const pglite = await PGlite.create({ parsers: pgliteParsers });
  const blank = await pglite.dumpDataDir('none');
  const handle = wrapPGlite(pglite);
  await migrate(handle.db);
  const migrated = await pglite.dumpDataDir('none');
  await handle.close();
  return { blank, migrated };
}

/**
 * A data directory as a first start leaves it, for tests that start embedded-storage
 * processes: the migrated dump loaded onto disk (~1 s; initdb and migrations on disk take ~5).
 */
async function migratedDataDir(migrated: Blob): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'haven-datadir-template-'));
  const pglite = await PGlite.create({
    dataDir: dir,
    parsers: pgliteParsers,
    loadDataDir: migrated,
  });
  await pglite.close();
  removeDataDir = () => rm(dir, { recursive: true, force: true });
  return dir;
}

export async function setup(project: TestProject): Promise<void> {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-changed'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const dumps = await pgliteDumps();
  project.provide('migratedDataDir', await migratedDataDir(dumps.migrated));
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
          [`haven_t_${process.pid}_%`, template],
        );
        for (const { datname } of rows) {
          // This run's databases only: another run may be using the same server.
          if (datname === template || datname.startsWith(`haven_t_${process.pid}_`)) {
            await client.query(`drop database if exists ${datname} with (force)`);
          }
        }
      });
    process.stdout.write(`[haven tests] database: PostgreSQL (template ${template})\n`);
  } else {
    const blankPath = join(tmpdir(), `haven-blank-${process.pid}.tar`);
    await writeFile(blankPath, Buffer.from(await dumps.blank.arrayBuffer()));
    const dumpPath = join(tmpdir(), `haven-template-${process.pid}.tar`);
    await writeFile(dumpPath, Buffer.from(await dumps.migrated.arrayBuffer()));
    info = { backend: 'pglite', dumpPath, blankPath };
    cleanup = async () => {
      await rm(dumpPath, { force: true });
      await rm(blankPath, { force: true });
    };
    process.stdout.write('[haven tests] database: embedded PGlite (template dump)\n');
  }
  project.provide('databaseTemplate', info);
}

export async function teardown(): Promise<void> {
  await cleanup?.();
  await removeDataDir?.();
}
