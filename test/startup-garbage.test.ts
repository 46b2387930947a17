// The full collection main.ts runs before listening (src/collect-startup-garbage.ts), on the
// real app: building it fills the empty object's transition list (so a `{}` given a first key
// the list lacks gets a map of its own), and the collection empties it again. V8's
// %HaveSameMap needs --allow-natives-syntax, so this runs in a node process of its own.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runNode } from './cli.js';
import { newDataDir } from './database.js';

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
const config = loadConfig({ DATA_DIR: process.env.DATA_DIR, LOG_LEVEL: 'silent' });
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

describe('the collection before the first request', () => {
  it('gives objects built from {} shared maps again after the app is built', async () => {
    const dataDir = newDataDir('startup-garbage');
    try {
      const probe = await runNode(['--allow-natives-syntax', '--input-type=module', '-e', PROBE], {
        DATA_DIR: dataDir,
      });
      expect(probe.code, probe.stderr).toBe(0);
      const { afterBuild, afterCollection } = JSON.parse(probe.stdout);
      // If a dependency stops filling the list, the first figure turns true: the collection
      // is then no longer needed (decisions.md says why it is there).
      expect(afterBuild).toBe(false);
      expect(afterCollection).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
