// What an on-device agent does with its key (CONTRACT.md §8 device rows): read its child's
// compiled policy, send reports, acknowledge the version it enforces. The agent is already
// verified (request.device); a device whose child or family was deleted meanwhile may still
// sit in the key cache for a few seconds, so a write that finds it gone answers 401.
import { randomUUID } from 'node:crypto';
import type { DeviceIdentity } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../../http/errors.js';
import { deviceActor } from '../audit/actor.js';
import { REDACTED } from '../audit/changes.js';
import type { PolicyChanges } from '../policies/policy-changes.js';
import type { PoliciesService } from '../policies/service.js';
import type { ViewingHistoryService } from '../viewing-history/service.js';
import { type CompiledBody, createPolicyInForceCache } from './policy-in-force.js';
import { acknowledgeVersion, findDevice, insertReport, writeEnforcementSummary } from './store.js';

export const REPORT_TYPES = [
  'screen_time',
  'app_usage',
  'web_activity',
  'blocked_attempt',
  'enforcement_status',
  'viewing',
] as const;

export type ReportType = (typeof REPORT_TYPES)[number];

export interface ReportInput {
  report_type: ReportType;
  payload: Record<string, unknown>;
  reported_at: string;
}

/** Deep enough for any real report; deeper would overflow the serialiser, not help anyone. */
const MAX_PAYLOAD_DEPTH = 32;
const FOREIGN_KEY_VIOLATION = '23503';
/** The same words as the key check, so a device cannot tell the two cases apart. */
const DEVICE_GONE = 'invalid or revoked device key';

function payloadDepth(payload: unknown): number {
  // An explicit stack: a payload nested thousands deep must not overflow the call stack.
  let deepest = 0;
  const pending: Array<{ value: unknown; depth: number }> = [{ value: payload, depth: 1 }];
  while (pending.length > 0) {
    const { value, depth } = pending.pop() as { value: unknown; depth: number };
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_PAYLOAD_DEPTH) {
      return deepest;
    }
    if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) {
        if (item !== null && typeof item === 'object') {
          pending.push({ value: item, depth: depth + 1 });
        }
      }
    }
  }
  return deepest;
}

/** The viewing fields, trimmed; the body schema already checked their types and presence. */
function viewingOf(payload: Record<string, unknown>) {
  const text = (field: string) => {
    const value = (payload[field] as string).trim();
    if (value === '') {
      throw new BadRequestError(`payload.${field} must not be empty`);
    }
    return value;
  };
  const series = typeof payload.series_title === 'string' ? payload.series_title.trim() : '';
  return {
    platform: text('platform'),
    title: text('title'),
    seriesTitle: series === '' ? null : series,
    watchedAt: new Date(payload.watched_at as string),
  };
}

/**
 * What a report's audit entry says it holds: its type and how much, never what (a payload
 * holds URLs, titles, times of the child's activity). The viewing history and the device's
 * enforcement status it fills are named without their values.
 */
function reportChanges(input: ReportInput): Record<string, unknown> {
  return {
    report_type: input.report_type,
    payload: REDACTED,
    payload_fields: Object.keys(input.payload).length,
    ...(input.report_type === 'viewing' ? { viewing_history: REDACTED } : {}),
    ...(input.report_type === 'enforcement_status' ? { enforcement_status: REDACTED } : {}),
  };
}

export function createDeviceAgentService(deps: {
  db: Db;
  clock: Clock;
  writes: ChangeRunner;
  policies: Pick<PoliciesService, 'activePolicyVersionOf' | 'activePolicySnapshotOf'>;
  policyChanges: Pick<PolicyChanges, 'subscribe'>;
  viewingHistory: Pick<ViewingHistoryService, 'recordViewing'>;
}) {
  const { db, clock } = deps;
  const inForce = createPolicyInForceCache({
    clock,
    changes: deps.policyChanges,
    loadVersion: (childId) => deps.policies.activePolicyVersionOf(childId),
    loadSnapshot: (childId) => deps.policies.activePolicySnapshotOf(childId),
  });

  /** No active policy: a 404, unless the device itself went with its child. */
  async function noPolicy(device: DeviceIdentity): Promise<never> {
    if ((await findDevice(db, device.id))?.status !== 'active') {
      throw new UnauthorizedError(DEVICE_GONE);
    }
    throw new NotFoundError('policy not found');
  }

  /** A compiled body as sent: stamped with the time of this answer. */
  const stamped = (body: CompiledBody) => ({
    policyId: body.id,
    version: body.version,
    json: body.head + clock.now().toISOString() + body.tail,
  });

  return {
    /** What currentPolicyVersion would answer, if it can without the database; else undefined. */
    knownPolicyVersion: (device: DeviceIdentity) => inForce.knownVersion(device.childId),

    /** Which policy and version are in force: all a conditional read needs (from memory). */
    async currentPolicyVersion(device: DeviceIdentity) {
      return (await inForce.version(device.childId, device.familyId)) ?? noPolicy(device);
    },

    /**
     * The policy as the device enforces it (policy-in-force.ts compiles it), serialised,
     * stamped with the time of this answer; `current` is what currentPolicyVersion said.
     */
    async compiledPolicy(device: DeviceIdentity, current: { id: string; version: number }) {
      const body = (await inForce.compiled(device.childId, current)) ?? (await noPolicy(device));
      return stamped(body);
    },

    /** What compiledPolicy would answer for `current`, if it can from memory; else undefined. */
    knownCompiledPolicy(current: { id: string; version: number }) {
      const body = inForce.knownCompiled(current);
      return body && stamped(body);
    },

    /** Every report is kept; two types also change what the family sees. */
    async report(device: DeviceIdentity, input: ReportInput): Promise<void> {
      if (payloadDepth(input.payload) > MAX_PAYLOAD_DEPTH) {
        throw new BadRequestError(`payload must be nested at most ${MAX_PAYLOAD_DEPTH} levels`);
      }
      const viewing = input.report_type === 'viewing' ? viewingOf(input.payload) : undefined;
      const reportedAt = new Date(input.reported_at);
      const now = clock.now();
      try {
        await deps.writes.run(async (change) => {
          const trx = change.trx;
          await insertReport(trx, {
            id: randomUUID(),
            device_id: device.id,
            child_id: device.childId,
            report_type: input.report_type,
            payload: input.payload,
            reported_at: reportedAt,
            received_at: now,
          });
          if (input.report_type === 'enforcement_status') {
            await writeEnforcementSummary(trx, device.id, input.payload, reportedAt, now);
          }
          if (viewing) {
            await deps.viewingHistory.recordViewing(
              { ...viewing, childId: device.childId, deviceId: device.id },
              trx,
            );
          }
          change.emit(device.familyId, [
            {
              type: 'device.report',
              data: {
                device_id: device.id,
                child_id: device.childId,
                report_type: input.report_type,
                reported_at: reportedAt.toISOString(),
              },
            },
          ]);
          change.audit({
            familyId: device.familyId,
            actor: deviceActor(device),
            action: 'device.reported',
            target: { type: 'device', id: device.id },
            changes: reportChanges(input),
          });
        });
      } catch (error) {
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) {
          throw new UnauthorizedError(DEVICE_GONE);
        }
        throw error;
      }
    },

    async acknowledge(device: DeviceIdentity, version: number) {
      await deps.writes.run(async (change) => {
        if (!(await acknowledgeVersion(change.trx, device.id, version, clock.now()))) {
          throw new UnauthorizedError(DEVICE_GONE);
        }
        change.emit(device.familyId, [
          {
            type: 'device.acknowledged',
            data: { device_id: device.id, child_id: device.childId, acknowledged_version: version },
          },
        ]);
        change.audit({
          familyId: device.familyId,
          actor: deviceActor(device),
          action: 'device.acknowledged',
          target: { type: 'device', id: device.id },
          changes: { policy_version: version },
        });
      });
      return { acknowledged_version: version };
    },
  };
}

export type DeviceAgentService = ReturnType<typeof createDeviceAgentService>;
