// Whether the full collection main.ts runs before listening (src/collect-startup-garbage.ts)
// still earns its place. Building the app fills the empty object's transition list (so a `{}`
// given a first key the list lacks gets a map of its own) and the collection empties it again:
// if a dependency stops filling the list, "after the build" turns true and the collection is
// no longer needed. V8's %HaveSameMap needs --allow-natives-syntax, so the probe runs in a
// node process of its own, on the built dist/. It leans on V8's internals, so it lives in the
// bench, not in `npm test` (docs/decisions.md "The empty object's transitions").
import { runNode } from '../test/cli.js';

const PROBE = `
import { buildApp } from './dist/app.js';
import { collectStartupGarbage } from './dist/collect-startup-garbage.js';
import { loadConfig } from './dist/config.js';
import { openStorage } from './dist/db/storage.js';

const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
let probes = 0;
/** Whether two objects given the same new first key share a map, as they should. */
function freshKeyShared() {
  const key = 'probe_' + probes++;
  const first = {};
  first[key] = 1;
  const second = {};
  second[key] = 2;
  return sameMap(first, second);
}
const config = loadConfig({ DATA_DIR: 'memory', LOG_LEVEL: 'silent' });
const storage = await openStorage(config);
const app = await buildApp(config, { database: storage.database });
await app.ready();
const afterBuild = freshKeyShared();
collectStartupGarbage();
const afterCollection = freshKeyShared();
await app.close();
await storage.close();
process.stdout.write(JSON.stringify({ afterBuild, afterCollection }));
`;

export interface StartupMaps {
  /** A fresh first key on `{}` shares its map right after the app is built (expected: no). */
  afterBuild: boolean;
  /** ... and after the startup collection (expected: yes). */
  afterCollection: boolean;
}

/** Builds the app in a node process of its own and probes the empty object's maps. */
export async function probeStartupMaps(): Promise<StartupMaps> {
  const probe = await runNode(['--allow-natives-syntax', '--input-type=module', '-e', PROBE], {});
  if (probe.code !== 0) {
    throw new Error(`the startup maps probe exited with ${probe.code}: ${probe.stderr}`);
  }
  return JSON.parse(probe.stdout) as StartupMaps;
}

/** The bench's line for the probe: whether the collection is still needed and still works. */
export function startupMapsNote(maps: StartupMaps): string {
  const needed = !maps.afterBuild;
  const works = maps.afterCollection;
  return `(startup collection: a fresh key on {} shares its map after the build: ${maps.afterBuild ? 'yes' : 'no'}; after the collection: ${maps.afterCollection ? 'yes' : 'no'} — ${needed && works ? 'needed, and it works' : !needed ? 'no longer needed: a dependency stopped filling the list' : 'needed, and it no longer restores shared maps'})`;
}
