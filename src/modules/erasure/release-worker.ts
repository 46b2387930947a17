// The erasure's release job (queue `erasure-releases`): takes back what Haven applied on every
// connection the erasure found (CONTRACT.md §11.4), from the sealed material the erasure
// wrote, then completes and signs the receipt and deletes that material in one transaction.
// The credentials exist nowhere else by then (the connection rows went with the erasure), and
// nowhere at all afterwards: the queue's message holds the erasure id only.
//
// The same queue carries each erasure's deadline job, 7 days on: whatever is still pending
// then is `failed` and the material goes, even if the release job never got to end.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { JobContext } from '../../jobs/queue.js';
import { QUEUE_SETTINGS, QUEUES } from '../../jobs/queues.js';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import type { CredentialCipher } from '../connections/credential-cipher.js';
import type { PlatformResult } from '../enforcement/adapter.js';
import type { AdapterRegistry } from '../enforcement/adapter-registry.js';
import type { LivePartners } from '../partners/live-partners.js';
import { completed } from './receipt.js';
import type { ReleaseWork, SealedReleases } from './release-plan.js';
import {
  completeReceipt,
  connectionExists,
  deleteReleaseSecret,
  findReleaseSecret,
  lockOpenReceipt,
  type ReleaseStatus,
  testClockTime,
} from './store.js';

export interface ErasureJobData {
  erasure_id: string;
  /** The deadline job: what is not released by now has failed, and the material goes. */
  deadline?: true;
}

/** How long the sealed credentials may outlive their erasure, whatever happens to its job. */
export const RELEASE_DEADLINE_SECONDS = 7 * 24 * 60 * 60;

export function createErasureReleaseWorker(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  cipher: CredentialCipher;
  adapters: AdapterRegistry;
  livePartners: LivePartners;
  steward: Ed25519SigningKey;
}) {
  const { db } = deps;
  const retryLimit = QUEUE_SETTINGS[QUEUES.erasureReleases].retryLimit ?? 0;

  async function releaseOne(sealed: SealedReleases, work: ReleaseWork): Promise<PlatformResult> {
    const failed = (message: string): PlatformResult => ({
      status: 'failed',
      rules_applied: 0,
      rules_skipped: 0,
      rules_failed: 0,
      error_message: message,
    });
    const resolved = deps.adapters.resolve(work.platform_id);
    if (resolved.kind === 'unsupported') {
      return failed(resolved.reason);
    }
    if (work.partner) {
      const partner = deps.livePartners.get(work.platform_id);
      if (!partner) {
        return failed(`no live adapter for ${work.platform_id} in this deployment`);
      }
      // A child's erasure leaves the family's connection: its other runs take its lease.
      const lease = (await connectionExists(db, work.connection_id))
        ? { connectionId: work.connection_id }
        : undefined;
      return partner.released(work.partner.credentials, work.partner.state, lease);
    }
    // The sandbox's adapter and the device agent's release as a release job would: no rules.
    return resolved.adapter.apply({
      familyId: sealed.family_id,
      childId: sealed.child_id ?? '',
      connectionId: work.connection_id,
      platform: resolved.platform,
      policy: { id: '', version: 0 }, // a release pushes no policy
      rules: [],
      credentials: async () => undefined,
      latestRules: async () => [],
    });
  }

  /**
   * Completes the receipt (each platform still pending takes its outcome here, `failed` when
   * it has none), signs it, and deletes the sealed material, in one transaction. A receipt
   * completed already (the deadline after the job, or the job after the deadline) stays.
   */
  async function finish(erasureId: string, outcomes: ReadonlyMap<string, ReleaseStatus>) {
    await db.transaction().execute(async (trx) => {
      const receipt = await lockOpenReceipt(trx, erasureId);
      if (receipt) {
        const releases = receipt.releases.map((release) =>
          release.status === 'pending'
            ? { ...release, status: outcomes.get(release.platform_id) ?? 'failed' }
            : release,
        );
        const clockTime = receipt.test_clock_id
          ? await testClockTime(trx, receipt.test_clock_id)
          : undefined;
        const done = await completed(
          deps.steward,
          receipt,
          releases,
          clockTime ?? deps.clock.now(),
        );
        await completeReceipt(trx, erasureId, {
          releases: done.releases,
          completed_at: done.completed_at as Date,
          signature: done.signature as string,
        });
      }
      await deleteReleaseSecret(trx, erasureId);
    });
  }

  async function run(erasureId: string): Promise<void> {
    const secret = await findReleaseSecret(db, erasureId);
    if (!secret) {
      return; // ended already
    }
    if (secret.expires_at <= deps.clock.now()) {
      await finish(erasureId, new Map());
      return;
    }
    const sealed = deps.cipher.open(
      { sealed: secret.sealed, keyId: secret.key_id },
      erasureId,
    ) as SealedReleases;
    const outcomes = new Map<string, ReleaseStatus>();
    for (const work of sealed.work) {
      // One at a time, as an enforcement job goes through a family's platforms.
      const result = await releaseOne(sealed, work);
      if (result.status !== 'success') {
        // The partner's reason, for the operator: the receipt says `failed` only.
        deps.log.warn(
          { erasure_id: erasureId, platform_id: work.platform_id, reason: result.error_message },
          'an erasure release failed',
        );
      }
      outcomes.set(work.platform_id, result.status === 'success' ? 'released' : 'failed');
    }
    await finish(erasureId, outcomes);
  }

  return async function handleErasureJob(data: ErasureJobData, context: JobContext): Promise<void> {
    if (typeof data?.erasure_id !== 'string') {
      return; // not ours to run; retrying would not make it valid
    }
    if (data.deadline) {
      await finish(data.erasure_id, new Map());
      return;
    }
    try {
      await run(data.erasure_id);
    } catch (error) {
      if (context.retryCount < retryLimit) {
        throw error; // pg-boss runs it again with backoff; a re-run takes back nothing twice
      }
      // The last attempt: a receipt that says so rather than one pending for 7 days.
      await finish(data.erasure_id, new Map());
    }
  };
}
