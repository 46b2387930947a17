// `npm run admin -- <command> …`: operator commands on the configured storage.
//   set-tier <orgId> <tier> [rpm]   change an org's tier and per-minute limit
import { systemClock } from '../clock.js';
import { ConfigError, loadConfig } from '../config.js';
import { openStorage } from '../db/storage.js';
import { createOrgsService } from '../modules/orgs/service.js';
import { createUsersService } from '../modules/users/service.js';

const USAGE = 'usage: npm run admin -- set-tier <orgId> <tier> [rpm]';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function fail(message: string): never {
  process.stderr.write(`haven admin: ${message}\n`);
  process.exit(1);
}

const [command, ...args] = process.argv.slice(2);
if (command !== 'set-tier' || args.length < 2 || args.length > 3) {
  fail(USAGE);
}
const [orgId = '', tier = '', rpmText] = args;
if (!UUID.test(orgId)) {
  fail('invalid org ID');
}
if (!/^[a-z][a-z0-9_-]{0,31}$/.test(tier)) {
  fail('tier must be a lowercase word (e.g. free, pro, accredited)');
}
const rpm = rpmText === undefined ? undefined : Number(rpmText);
if (rpm !== undefined && (!Number.isInteger(rpm) || rpm < 1)) {
  fail('rpm must be a positive integer');
}

let storage: Awaited<ReturnType<typeof openStorage>> | undefined;
let failure: string | undefined;
try {
  storage = await openStorage(loadConfig());
  const deps = { db: storage.database.db, clock: systemClock };
  const orgs = createOrgsService({ ...deps, users: createUsersService(deps) });
  const org = await orgs.setTier(orgId, tier, rpm);
  process.stdout.write(`org ${org.id}: tier ${org.tier}, rate_limit_rpm ${org.rate_limit_rpm}\n`);
} catch (error) {
  failure = error instanceof ConfigError ? error.message : (error as Error).message;
} finally {
  await storage?.close();
}
if (failure !== undefined) {
  fail(failure);
}
