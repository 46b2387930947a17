// `npm run admin -- <command> …`: operator commands on the configured storage.
//   set-tier <orgId> <tier> [rpm]                          an org's tier and per-minute limit
//   set-advisor-tier <did> <verified|provisional>          promote or demote a trust-list entry
//   set-advisor-status <did> <active|suspended|revoked>    suspend, revoke or restore it
//   reseal-credentials                                     finish a CREDENTIALS_KEY rotation
// The trust-list commands re-issue the list; servers on the same PostgreSQL database serve
// the new issue within a second (Redis notification, else their version check). A change to
// an org (or to an org's advisor) is on the org's audit chain, by the actor `operator`.
// reseal-credentials seals every credential, webhook secret and erasure release material
// sealed with an older key again with CREDENTIALS_KEY's first, while servers run (a value a
// server rewrites meanwhile is kept); it prints counts per kind, and fails naming the kinds
// that hold values sealed with a key no longer configured. It changes nothing a family or an
// org sees (the values in the clear stay the same), so it writes no audit entry.
import pino from 'pino';
import { createInvalidationBus } from '../cache/invalidation-bus.js';
import { systemClock } from '../clock.js';
import { type Config, ConfigError, DID_PATTERN, loadConfig } from '../config.js';
import type { Db } from '../db/connect.js';
import { openStorage } from '../db/storage.js';
import { createAuditedWrites } from '../modules/audit/audited-writes.js';
import {
  describeCounts,
  describeProblems,
  resealCredentials,
  resealKeys,
} from '../modules/connections/reseal.js';
import { changeTrustListEntry } from '../modules/federation/advisors-service.js';
import type { EntryStatus, EntryTier } from '../modules/federation/entries-store.js';
import { loadStewardKey } from '../modules/federation/keys.js';
import { createTrustListService } from '../modules/federation/trust-list-service.js';
import { createOrgsService } from '../modules/orgs/service.js';
import { createUsersService } from '../modules/users/service.js';

const USAGE =
  'usage: npm run admin -- set-tier <orgId> <tier> [rpm] | ' +
  'set-advisor-tier <did> <verified|provisional> | ' +
  'set-advisor-status <did> <active|suspended|revoked> | reseal-credentials';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIERS: EntryTier[] = ['verified', 'provisional'];
const STATUSES: EntryStatus[] = ['active', 'suspended', 'revoked'];

function fail(message: string): never {
  process.stderr.write(`haven admin: ${message}\n`);
  process.exit(1);
}

type Command = (db: Db, config: Config) => Promise<string>;

/** A command that did part of its work: what it did (printed), then why it did not finish. */
class PartlyDone extends Error {
  constructor(
    readonly output: string,
    message: string,
  ) {
    super(message);
  }
}

function setTier(args: string[]): Command {
  const [orgId = '', tier = '', rpmText] = args;
  if (args.length < 2 || args.length > 3) {
    fail(USAGE);
  }
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
  return async (db) => {
    const deps = { db, clock: systemClock };
    const orgs = createOrgsService({
      ...deps,
      users: createUsersService(deps),
      writes: createAuditedWrites(deps),
    });
    const org = await orgs.setTier(orgId, tier, rpm);
    return `org ${org.id}: tier ${org.tier}, rate_limit_rpm ${org.rate_limit_rpm}`;
  };
}

function setEntry(field: 'tier' | 'status', allowed: string[], args: string[]): Command {
  const [did = '', value = ''] = args;
  if (args.length !== 2) {
    fail(USAGE);
  }
  if (!DID_PATTERN.test(did)) {
    fail('invalid DID (did:ocss:<1-64 of a-z 0-9 . _ ->)');
  }
  if (!allowed.includes(value)) {
    fail(`${field} must be one of ${allowed.join(', ')}`);
  }
  return async (db, config) => {
    const deps = { db, clock: systemClock };
    const changed = await changeTrustListEntry(
      { ...deps, writes: createAuditedWrites(deps) },
      did,
      { [field]: value },
    );
    if (!changed) {
      throw new Error(`no trust-list entry for ${did}`);
    }
    const log = pino({ level: 'warn' });
    const bus = createInvalidationBus({ redisUrl: config.redisUrl, log });
    const trustList = createTrustListService({
      db,
      clock: systemClock,
      bus,
      log,
      steward: await loadStewardKey(db, config),
      stewardDid: config.stewardDid,
      watchDatabase: false,
    });
    try {
      const issue = await trustList.reissue();
      return `${did}: ${field} ${value}; trust list issue ${issue.number}`;
    } finally {
      trustList.close();
      await bus.close();
    }
  };
}

function resealAll(args: string[]): Command {
  if (args.length > 0) {
    fail(USAGE);
  }
  return async (db, config) => {
    const counts = await resealCredentials(db, await resealKeys(db, config.credentialKeys));
    const problems = describeProblems(counts);
    if (problems !== undefined) {
      throw new PartlyDone(describeCounts(counts), problems);
    }
    return describeCounts(counts);
  };
}

const [name, ...args] = process.argv.slice(2);
const commands: Record<string, () => Command> = {
  'set-tier': () => setTier(args),
  'set-advisor-tier': () => setEntry('tier', TIERS, args),
  'set-advisor-status': () => setEntry('status', STATUSES, args),
  'reseal-credentials': () => resealAll(args),
};
const make = name === undefined ? undefined : commands[name];
if (!make) {
  fail(USAGE);
}
const command = make();

let storage: Awaited<ReturnType<typeof openStorage>> | undefined;
let failure: string | undefined;
try {
  const config = loadConfig();
  storage = await openStorage(config);
  process.stdout.write(`${await command(storage.database.db, config)}\n`);
} catch (error) {
  if (error instanceof PartlyDone) {
    process.stdout.write(`${error.output}\n`);
  }
  failure = error instanceof ConfigError ? error.message : (error as Error).message;
} finally {
  await storage?.close();
}
if (failure !== undefined) {
  fail(failure);
}
