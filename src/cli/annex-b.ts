// `npm run annex-b -- <command>`: the steward's Annex B commands on the configured storage.
//   freeze   freeze the current rule registry as the next edition
//   list     the frozen editions: number, frozen_at, hash
import { systemClock } from '../clock.js';
import { ConfigError, loadConfig } from '../config.js';
import { openStorage } from '../db/storage.js';
import { type AnnexBService, createAnnexBService } from '../modules/annex-b/service.js';

const USAGE = 'usage: npm run annex-b -- freeze|list';

// A Map, not an object literal: `toString` or `__proto__` must not look like a command.
const COMMANDS = new Map<string, (annexB: AnnexBService) => Promise<string[]>>([
  [
    'freeze',
    async (annexB) => {
      const frozen = await annexB.freeze();
      return [`froze Annex B edition ${frozen.edition} (sha256:${frozen.sha256})`];
    },
  ],
  [
    'list',
    async (annexB) => {
      const editions = await annexB.list();
      if (editions.length === 0) {
        return ['no Annex B edition frozen yet'];
      }
      return editions.map(
        (e) => `edition ${e.edition}  frozen_at ${e.frozen_at.toISOString()}  sha256:${e.sha256}`,
      );
    },
  ],
]);

const [name, ...extra] = process.argv.slice(2);
const command = name === undefined ? undefined : COMMANDS.get(name);
if (!command || extra.length > 0) {
  // A mistyped command is a usage error (2), not a failure of the storage (1).
  process.stderr.write(`haven annex-b: ${USAGE}\n`);
  process.exit(2);
}

let storage: Awaited<ReturnType<typeof openStorage>> | undefined;
let failure: string | undefined;
try {
  storage = await openStorage(loadConfig());
  const lines = await command(createAnnexBService({ db: storage.database.db, clock: systemClock }));
  process.stdout.write(`${lines.join('\n')}\n`);
} catch (error) {
  failure = error instanceof ConfigError ? error.message : (error as Error).message;
} finally {
  await storage?.close();
}
if (failure !== undefined) {
  process.stderr.write(`haven annex-b: ${failure}\n`);
  process.exit(1);
}
