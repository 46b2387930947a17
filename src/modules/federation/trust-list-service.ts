// The signed trust list (CONTRACT.md §9), built once per change and served from memory: a
// read does no database work. An issue is written only when the entries change, so
// `issue.number` rises exactly on change and the body is byte-identical in between. Other
// instances hear of a new issue through the invalidation bus, and on PostgreSQL (where an
// operator command may re-issue beside running servers) by a one-row version check a second.
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { JWK } from 'jose';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import { keyIdFor } from '../../ocss/public-jwk.js';
import {
  issueIfChanged,
  latestIssue,
  latestIssueNumber,
  listEntries,
  type TrustListIssueTable,
} from './entries-store.js';
import { entriesDigest, trustListBody, unsignedEntries } from './trust-list-document.js';

const CHANNEL = 'trust-list';
export const VERSION_CHECK_EVERY_MS = 1_000;

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
}) {
  const { db } = deps;
  const signer = {
    keyId: keyIdFor(deps.stewardDid, deps.steward.kid),
    jwk: deps.steward.publicJwk,
    sign: (bytes: Buffer) => deps.steward.sign(bytes),
  };
  let served: ServedTrustList | undefined;
  let published = new Map<string, PublishedEntry>();

  function adopt(issue: TrustListIssueTable): void {
    if (served && served.number >= issue.number) {
      return;
    }
    const etag = `"${createHash('sha256').update(issue.body).digest('hex')}"`;
    published = entriesByKeyId(issue.body);
    served = { number: issue.number, body: issue.body, etag };
  }

  async function refresh(): Promise<void> {
    if ((await latestIssueNumber(db)) > (served?.number ?? 0)) {
      const issue = await latestIssue(db);
      if (issue) {
        adopt(issue);
      }
    }
  }

  deps.bus.subscribe(CHANNEL, () => {
    refresh().catch((error) => deps.log.warn({ err: error }, 'trust list refresh failed'));
  });
  const timer = deps.watchDatabase
    ? setInterval(() => {
        refresh().catch((error) => deps.log.warn({ err: error }, 'trust list check failed'));
      }, VERSION_CHECK_EVERY_MS).unref()
    : undefined;

  return {
    signer,

    /** Re-reads the entries and writes a new issue if they changed. */
    async reissue(): Promise<ServedTrustList> {
      const entries = unsignedEntries(await listEntries(db));
      const issue = await issueIfChanged(
        db,
        entriesDigest(entries),
        deps.clock.now(),
        (number, at) => trustListBody(signer, { number, issuedAt: at }, entries),
      );
      const before = served?.number;
      adopt(issue);
      if (before !== issue.number) {
        await deps.bus.publish(CHANNEL, String(issue.number));
      }
      return served as ServedTrustList;
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
