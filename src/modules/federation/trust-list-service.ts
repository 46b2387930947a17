// The signed trust list (CONTRACT.md §9), built once per change and served from memory: a
// read does no database work. An issue is written only when the entries change, so
// `issue.number` rises exactly on change and the body is byte-identical in between. Other
// instances hear of a new issue through the invalidation bus, and on PostgreSQL (where an
// operator command may re-issue beside running servers) through a database notification sent
// by the transaction that writes the issue (migration 0017); the one-row version check runs
// every second only while the listening connection is down, else every 30 s as a safety net.
//
// Key rotation: the steward entry always publishes the key that signs, and every key that
// signed an issue is kept (steward_keys). An instance started with another key re-issues once
// (under the issue lock, so concurrent starts make one issue); every instance serves the
// current key and those retired less than 30 days ago at /.well-known/ocss/keys, adopted
// together with the issue, so the list an instance serves always names a key it serves.
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { JWK } from 'jose';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { DatabaseNotifications } from '../../db/notifications.js';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import { keyIdFor } from '../../ocss/public-jwk.js';
import {
  insertIssue,
  latestIssue,
  latestIssueNumber,
  listEntries,
  listStewardKeys,
  lockIssues,
  pinStewardKey,
  recordStewardSigner,
  type StewardKeyRow,
  type TrustListIssueTable,
} from './entries-store.js';
import { entriesDigest, trustListBody, unsignedEntries } from './trust-list-document.js';

const CHANNEL = 'trust-list';
export const VERSION_CHECK_EVERY_MS = 1_000;
/** The channel migration 0017's trigger notifies on each new issue. */
const ISSUE_CHANNEL = 'haven_trust_list';
/** While notifications arrive, the version check is only a safety net. */
const CHECK_WHILE_LISTENING_MS = 30_000;
/** How long a retired steward key is still served (verifiers holding older lists). */
export const RETIRED_KEY_SERVED_MS = 30 * 86_400_000;

/** The keys body served until `validUntil` (epoch ms), when a retired key drops out. */
interface ServedKeys {
  json: string;
  validUntil: number;
}

/** Current key first, then retired ones, newest retirement first, if retired < 30 days. */
function servedKeys(rows: StewardKeyRow[], now: number): ServedKeys {
  const live = rows
    .filter((row) => !row.retired_at || now - row.retired_at.getTime() < RETIRED_KEY_SERVED_MS)
    .sort(
      (a, b) =>
        (b.retired_at?.getTime() ?? Number.POSITIVE_INFINITY) -
        (a.retired_at?.getTime() ?? Number.POSITIVE_INFINITY),
    );
  const expiries = live
    .filter((row) => row.retired_at)
    .map((row) => (row.retired_at as Date).getTime() + RETIRED_KEY_SERVED_MS);
  return {
    json: JSON.stringify({ keys: live.map((row) => row.public_jwk) }),
    validUntil: Math.min(Number.POSITIVE_INFINITY, ...expiries),
  };
}

export interface ServedTrustList {
  number: number;
  body: string;
  /** `"` + hex SHA-256 of the body + `"` (a strong validator). */
  etag: string;
}

/** What a signed request is checked against: the entry as the served list publishes it. */
export interface PublishedEntry {
  did: string;
  tier: string;
  status: string;
  keyId: string;
  publicKey: KeyObject;
}

/** The served issue's entries by key_id: signatures are checked against the list itself. */
function entriesByKeyId(body: string): Map<string, PublishedEntry> {
  const document = JSON.parse(JSON.parse(body).document) as {
    entries: Array<{ did: string; tier: string; status: string; jwks: { signing_keys: JWK[] } }>;
  };
  const byKeyId = new Map<string, PublishedEntry>();
  for (const entry of document.entries) {
    for (const jwk of entry.jwks.signing_keys) {
      const keyId = keyIdFor(entry.did, String(jwk.kid));
      const publicKey = createPublicKey({ key: { ...jwk } as JsonWebKey, format: 'jwk' });
      byKeyId.set(keyId, {
        did: entry.did,
        tier: entry.tier,
        status: entry.status,
        keyId,
        publicKey,
      });
    }
  }
  return byKeyId;
}

export function createTrustListService(deps: {
  db: Db;
  clock: Clock;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
  steward: Ed25519SigningKey;
  stewardDid: string;
  /** Poll for issues made by other processes (PostgreSQL deployments). */
  watchDatabase: boolean;
  /** Issues written by any process, heard as they commit. */
  notifications?: DatabaseNotifications;
}) {
  const { db } = deps;
  const signer = {
    keyId: keyIdFor(deps.stewardDid, deps.steward.kid),
    jwk: deps.steward.publicJwk,
    sign: (bytes: Buffer) => deps.steward.sign(bytes),
  };
  let served: ServedTrustList | undefined;
  let published = new Map<string, PublishedEntry>();
  let stewardKeys: StewardKeyRow[] = [];
  let keys: ServedKeys | undefined;
  const warnedMismatches = new Set<string>();

  /** Adopts an issue and the steward keys read with it (both or neither). */
  function adopt(issue: TrustListIssueTable, keyRows: StewardKeyRow[]): void {
    if (served && served.number >= issue.number) {
      return;
    }
    const etag = `"${createHash('sha256').update(issue.body).digest('hex')}"`;
    published = entriesByKeyId(issue.body);
    served = { number: issue.number, body: issue.body, etag };
    stewardKeys = keyRows;
    keys = undefined;
    if (issue.key_id !== signer.keyId && !warnedMismatches.has(issue.key_id)) {
      warnedMismatches.add(issue.key_id);
      deps.log.warn(
        { this_kid: deps.steward.kid, issue_key_id: issue.key_id, issue: issue.number },
        `steward key mismatch: trust list issue ${issue.number} is signed by ${issue.key_id}, ` +
          `but this instance's OCSS_STEWARD_KEY is ${signer.keyId}; instances sharing a ` +
          'database must share one key (a rolling key rotation passes through this state)',
      );
    }
  }

  async function refresh(): Promise<void> {
    if ((await latestIssueNumber(db)) > (served?.number ?? 0)) {
      // Read together, so a key is never served without the issue it signed, or the reverse.
      const [issue, keyRows] = await db
        .transaction()
        .execute(async (trx) => [await latestIssue(trx), await listStewardKeys(trx)] as const);
      if (issue) {
        adopt(issue, keyRows);
      }
    }
  }

  deps.bus.subscribe(CHANNEL, () => {
    refresh().catch((error) => deps.log.warn({ err: error }, 'trust list refresh failed'));
  });
  const check = () => {
    lastCheck = Date.now();
    refresh().catch((error) => deps.log.warn({ err: error }, 'trust list check failed'));
  };
  let lastCheck = Date.now();
  const { notifications } = deps;
  if (deps.watchDatabase && notifications) {
    // A missed message (the listener was down) is caught up when it is back.
    void notifications.listen(ISSUE_CHANNEL, check, check);
  }
  // The timer itself costs no query: it checks the database each second only while no
  // notification can arrive.
  const timer = deps.watchDatabase
    ? setInterval(() => {
        if (!notifications?.listening || Date.now() - lastCheck >= CHECK_WHILE_LISTENING_MS) {
          check();
        }
      }, VERSION_CHECK_EVERY_MS).unref()
    : undefined;

  return {
    signer,

    /**
     * Pins the steward entry to this instance's key, re-reads the entries and writes a new
     * issue if they changed (a key change is such a change), all under the issue lock.
     */
    async reissue(): Promise<ServedTrustList> {
      const at = deps.clock.now();
      const outcome = await db.transaction().execute(async (trx) => {
        await lockIssues(trx);
        await pinStewardKey(trx, { did: deps.stewardDid, ...signer }, at);
        const entries = unsignedEntries(await listEntries(trx));
        const digest = entriesDigest(entries);
        const latest = await latestIssue(trx);
        if (latest && latest.entries_digest === digest) {
          return {
            issue: latest,
            previousKeyId: latest.key_id,
            keyRows: await listStewardKeys(trx),
          };
        }
        const number = (latest?.number ?? 0) + 1;
        const issue = {
          number,
          issued_at: at,
          entries_digest: digest,
          key_id: signer.keyId,
          body: trustListBody(signer, { number, issuedAt: at }, entries),
        };
        await insertIssue(trx, issue);
        await recordStewardSigner(
          trx,
          { kid: deps.steward.kid, did: deps.stewardDid, jwk: signer.jwk },
          at,
        );
        return { issue, previousKeyId: latest?.key_id, keyRows: await listStewardKeys(trx) };
      });
      const { issue, previousKeyId } = outcome;
      const before = served?.number;
      if (issue.key_id === signer.keyId && previousKeyId && previousKeyId !== signer.keyId) {
        deps.log.info(
          { from: previousKeyId, to: signer.keyId, issue: issue.number },
          `steward key rotated: trust list re-issued as ${issue.number}, signed by ${signer.keyId}; ${previousKeyId} is served as retired for 30 days`,
        );
      }
      adopt(issue, outcome.keyRows);
      if (before !== issue.number) {
        await deps.bus.publish(CHANNEL, String(issue.number));
      }
      return served as ServedTrustList;
    },

    /** The JWKS body of /.well-known/ocss/keys: current key and those retired < 30 days. */
    keysJson(): string {
      const now = deps.clock.now().getTime();
      if (!keys || now >= keys.validUntil) {
        keys = servedKeys(stewardKeys, now);
      }
      return keys.json;
    },

    /** What a read serves: from memory, always present after start. */
    current(): ServedTrustList {
      if (!served) {
        throw new Error('the trust list is issued at start; current() ran before it');
      }
      return served;
    },

    /** The entry of a key_id as the served list publishes it (no database work). */
    entryByKeyId(keyId: string): PublishedEntry | undefined {
      return published.get(keyId);
    },

    close(): void {
      if (timer) {
        clearInterval(timer);
      }
    },
  };
}

export type TrustListService = ReturnType<typeof createTrustListService>;
