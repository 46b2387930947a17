// Erasure (CONTRACT.md §12.3): DELETE /families/{id} and DELETE /children/{id} remove every
// row about their subject in one change, queue the release (§11.4) of what Haven applied on
// the family's platforms with the credentials sealed inside that job only, and leave a
// receipt, signed once every release has ended, for whoever erased (GET /erasures/{id}).
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Clock } from '../../clock.js';
import type { AppEnv } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { afterCommit } from '../../db/request-transaction.js';
import type { Change, ChangeRunner } from '../../db/transaction-effects.js';
import { NotFoundError } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import { QUEUES } from '../../jobs/queues.js';
import type { Ed25519SigningKey } from '../../ocss/ed25519-key.js';
import { actorOf } from '../audit/actor.js';
import type { ChildrenService } from '../children/service.js';
import type { CredentialCipher } from '../connections/credential-cipher.js';
import { createAdapterRegistry } from '../enforcement/adapter-registry.js';
import { consumeFailure } from '../enforcement/store.js';
import type { FamiliesService } from '../families/service.js';
import type { LivePartners } from '../partners/live-partners.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import type { FamilyClock } from '../test-clocks/family-clock.js';
import { completed, presentReceipt } from './receipt.js';
import { planReleases, type SealedReleases } from './release-plan.js';
import {
  createErasureReleaseWorker,
  type ErasureJobData,
  RELEASE_DEADLINE_SECONDS,
} from './release-worker.js';
import {
  findFamilyOwnership,
  findReceipt,
  insertReceipt,
  insertReleaseSecret,
  type ReceiptRow,
} from './store.js';
import {
  type ErasedSecrets,
  eraseChildRows,
  eraseFamilyRows,
  lockChild,
  lockFamily,
} from './subject-rows.js';

export const ERASURE_NOT_FOUND = 'erasure not found';

/** The channels of the secret caches (devices and MCP tokens services) deleted rows leave. */
const DEVICE_KEYS_CHANNEL = 'device-keys';
const MCP_TOKENS_CHANNEL = 'mcp-tokens';

export function createErasureService(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  appEnv: AppEnv;
  writes: ChangeRunner;
  jobs: JobQueue;
  bus: InvalidationBus;
  cipher: CredentialCipher;
  livePartners: LivePartners;
  steward: Ed25519SigningKey;
  familyClock: FamilyClock;
  families: Pick<FamiliesService, 'requireFamily'>;
  children: Pick<ChildrenService, 'requireChild'>;
  policyChanges: Pick<PolicyChanges, 'child' | 'family'>;
}) {
  const { db, clock } = deps;
  // The same adapters the enforcement jobs use (its registry is built the same way).
  const adapters = createAdapterRegistry({
    appEnv: deps.appEnv,
    livePartners: deps.livePartners,
    takeArmedFailure: (familyId, platformId) => consumeFailure(db, familyId, platformId),
  });
  deps.jobs.handle<ErasureJobData>(
    QUEUES.erasureReleases,
    createErasureReleaseWorker({ ...deps, adapters }),
  );

  /** Who may read the receipt, and the family's clock it is dated by. */
  function receiptOf(
    principal: Principal,
    family: { org_id: string | null; environment: string; test_clock_id: string | null },
    subject: { type: ReceiptRow['subject_type']; id: string },
    requestedAt: Date,
  ): Omit<ReceiptRow, 'erased' | 'releases'> {
    return {
      id: randomUUID(),
      subject_type: subject.type,
      subject_id: subject.id,
      requested_by_user_id: principal.kind === 'key' ? null : principal.userId,
      org_id: family.org_id,
      environment: family.org_id ? family.environment : null,
      test_clock_id: family.test_clock_id,
      requested_at: requestedAt,
      completed_at: null,
      signature: null,
    };
  }

  /**
   * The erasure's part of the change, once the plan is made and the rows are gone: the
   * receipt, and the release job with its sealed material and its deadline (or a receipt
   * complete and signed at once when nothing is to be released).
   */
  async function record(
    change: Change,
    receipt: Omit<ReceiptRow, 'erased' | 'releases'>,
    erased: Record<string, number>,
    plan: Awaited<ReturnType<typeof planReleases>>,
    sealed: Omit<SealedReleases, 'work'>,
  ): Promise<void> {
    const row: ReceiptRow = { ...receipt, erased, releases: plan.releases };
    if (plan.work.length === 0) {
      await insertReceipt(
        change.trx,
        await completed(deps.steward, row, plan.releases, receipt.requested_at),
      );
      return;
    }
    await insertReceipt(change.trx, row);
    const secret = deps.cipher.seal(
      { ...sealed, work: plan.work } satisfies SealedReleases,
      row.id,
    );
    await insertReleaseSecret(change.trx, {
      erasure_id: row.id,
      sealed: secret.sealed,
      key_id: secret.keyId,
      expires_at: new Date(clock.now().getTime() + RELEASE_DEADLINE_SECONDS * 1000),
    });
    const busyFor = plan.busyUntil
      ? Math.ceil((plan.busyUntil.getTime() - clock.now().getTime()) / 1000)
      : 0;
    await deps.jobs.send(
      QUEUES.erasureReleases,
      { erasure_id: row.id } satisfies ErasureJobData,
      // A run holding a profile now finishes its sends first: the release reads the profile
      // after them.
      { trx: change.trx, ...(busyFor > 0 ? { startAfterSeconds: busyFor } : {}) },
    );
    await deps.jobs.send(
      QUEUES.erasureReleases,
      { erasure_id: row.id, deadline: true } satisfies ErasureJobData,
      { trx: change.trx, startAfterSeconds: RELEASE_DEADLINE_SECONDS },
    );
    afterCommit(() => deps.jobs.wake(QUEUES.erasureReleases));
  }

  /** Every instance drops the deleted devices' and tokens' keys from its caches at once. */
  async function forget(secrets: ErasedSecrets): Promise<void> {
    for (const hash of secrets.deviceKeyHashes) {
      await deps.bus.publish(DEVICE_KEYS_CHANNEL, hash);
    }
    for (const hash of secrets.mcpTokenHashes) {
      await deps.bus.publish(MCP_TOKENS_CHANNEL, hash);
    }
  }

  function plan(trx: Db, familyId: string) {
    return planReleases(
      trx,
      {
        cipher: deps.cipher,
        adapters,
        livePartners: deps.livePartners,
        now: clock.now(),
        staleSeconds: deps.jobs.staleSeconds,
      },
      familyId,
    );
  }

  return {
    /** Erases a family (owner only): answers the erasure's id. */
    async eraseFamily(principal: Principal, familyId: string): Promise<string> {
      await deps.families.requireFamily(principal, familyId, 'write', ['owner']);
      const { id, secrets } = await deps.writes.run(async (change) => {
        const family = await findFamilyOwnership(change.trx, familyId);
        if (!family) {
          throw new NotFoundError('family not found');
        }
        const childIds = await lockFamily(change.trx, familyId);
        const now = await deps.familyClock.nowFor(familyId, change.trx);
        const receipt = receiptOf(principal, family, { type: 'family', id: familyId }, now);
        const releases = await plan(change.trx, familyId);
        const { erased, secrets } = await eraseFamilyRows(change.trx, familyId, childIds);
        await record(change, receipt, erased, releases, { family_id: familyId, child_id: null });
        // The family's own chain is gone with it; an org's family is recorded on the org's.
        if (family.org_id) {
          change.audit({
            orgId: family.org_id,
            actor: actorOf(principal),
            action: 'family.erased',
            target: { type: 'family', id: familyId },
            changes: { erasure_id: receipt.id },
          });
        }
        return { id: receipt.id, secrets };
      });
      await deps.policyChanges.family(familyId);
      await forget(secrets);
      return id;
    },

    /** Erases a child (owner or parent): answers the erasure's id. */
    async eraseChild(principal: Principal, childId: string): Promise<string> {
      const child = await deps.children.requireChild(principal, childId, 'write');
      const { id, secrets } = await deps.writes.run(async (change) => {
        const family = await findFamilyOwnership(change.trx, child.family_id);
        if (!family) {
          throw new NotFoundError('child not found');
        }
        const subject = { id: childId, familyId: child.family_id };
        await lockChild(change.trx, subject);
        const now = await deps.familyClock.nowFor(child.family_id, change.trx);
        const receipt = receiptOf(principal, family, { type: 'child', id: childId }, now);
        const releases = await plan(change.trx, child.family_id);
        const { erased, secrets } = await eraseChildRows(change.trx, subject);
        await record(change, receipt, erased, releases, {
          family_id: child.family_id,
          child_id: childId,
        });
        // The family learns which child went, by id only: the erasure keeps no personal value,
        // not even in the message it queues for the family's endpoints.
        change.emit(child.family_id, [
          { type: 'child.deleted', data: { id: childId, family_id: child.family_id } },
        ]);
        // The family's chain stays (its entries hold no personal value), verifiable as it was.
        change.audit({
          familyId: child.family_id,
          actor: actorOf(principal),
          action: 'child.erased',
          target: { type: 'child', id: childId },
          changes: { erasure_id: receipt.id },
        });
        return { id: receipt.id, secrets };
      });
      await deps.policyChanges.child(childId);
      await forget(secrets);
      return id;
    },

    /** The receipt, for the user who erased or the keys of the family's org; else 404. */
    async getErasure(principal: Principal, erasureId: string) {
      const row = await findReceipt(db, erasureId);
      const mayRead =
        row !== undefined &&
        (principal.kind === 'key'
          ? row.org_id === principal.orgId && row.environment === principal.environment
          : row.requested_by_user_id === principal.userId);
      if (!mayRead) {
        throw new NotFoundError(ERASURE_NOT_FOUND);
      }
      return presentReceipt(row);
    },
  };
}

export type ErasureService = ReturnType<typeof createErasureService>;
