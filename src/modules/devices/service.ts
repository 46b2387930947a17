// Devices of a child (CONTRACT.md §8 device rows): registered and revoked by the family's
// owners and parents, each with a `svcdev_` key shown once. A known key is verified from a
// short-lived cache (no database round trip) that a revocation empties on every instance;
// last_seen_at is batched in memory and flushed every few seconds and on close.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { DeviceIdentity, Principal } from '../../auth/principal.js';
import {
  displayPrefix,
  generateSecret,
  hashSecret,
  isWellFormed,
  SECRET_PREFIXES,
} from '../../auth/secrets.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import { createSecretCache } from '../../cache/secret-cache.js';
import { createWriteBehind, laterDate } from '../../cache/write-behind.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { BadRequestError, requireVisible } from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import { CHILD_NOT_FOUND, type ChildrenService } from '../children/service.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import {
  type DeviceRow,
  findDevice,
  findDeviceByKeyHash,
  insertDevice,
  listDevicesRead,
  revokeDevice,
  writeLastSeen,
} from './store.js';

export const SEEN_FLUSH_EVERY_MS = 5_000;
const DEVICE_NOT_FOUND = 'device not found';
/** The name a person gave the device: the audit log names the field without its value. */
const DEVICE_PERSONAL_FIELDS = ['device_name'] as const;

export interface DeviceInput {
  device_name: string;
  platform_id?: string | null;
  device_model?: string | null;
  os_version?: string | null;
  app_version?: string | null;
}

/** Optional descriptive fields: trimmed, and blank means not given. */
function optionalText(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** The device as events carry it: JSON-ready, like the API shows it. */
export function deviceJson(device: DeviceRow): Record<string, unknown> {
  const iso = (at: Date | null) => (at === null ? null : at.toISOString());
  return {
    ...device,
    last_seen_at: iso(device.last_seen_at),
    created_at: device.created_at.toISOString(),
    updated_at: device.updated_at.toISOString(),
    revoked_at: iso(device.revoked_at),
  };
}

export function createDevicesService(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  bus: InvalidationBus;
  writes: ChangeRunner;
  children: Pick<ChildrenService, 'requireChild'>;
  families: Pick<FamiliesService, 'visibleRows'>;
}) {
  const { db, clock } = deps;
  const keys = createSecretCache({
    bus: deps.bus,
    channel: 'device-keys',
    clock,
    load: (keyHash) => findDeviceByKeyHash(db, keyHash),
  });
  const seen = createWriteBehind<Date>({
    what: 'device last-seen',
    everyMs: SEEN_FLUSH_EVERY_MS,
    // At most 20 000 ids a batch: two parameters each, within PostgreSQL's 65 535. A fleet
    // polling faster than that per flush interval flushes early; below it, one update
    // every interval, however many polls each device made.
    flushAt: 20_000,
    maxEntries: 100_000,
    merge: laterDate,
    write: (batch) => writeLastSeen(db, batch),
    log: deps.log,
  });

  async function requireManagedDevice(principal: Principal, id: string, access: 'read' | 'write') {
    return requireVisible(DEVICE_NOT_FOUND, await findDevice(db, id), (device) =>
      deps.children.requireChild(principal, device.child_id, access),
    );
  }

  /** An active device's identity, its use stamped; nothing for a revoked or unknown one. */
  function activeIdentity(
    device: Awaited<ReturnType<typeof findDeviceByKeyHash>>,
  ): DeviceIdentity | undefined {
    if (device?.status !== 'active') {
      return undefined;
    }
    seen.add(device.id, clock.now());
    return { id: device.id, childId: device.child_id, familyId: device.family_id };
  }

  return {
    async registerDevice(principal: Principal, childId: string, input: DeviceInput) {
      const child = await deps.children.requireChild(principal, childId, 'write');
      const name = input.device_name.trim();
      if (name === '') {
        throw new BadRequestError('device_name is required');
      }
      const secret = generateSecret(SECRET_PREFIXES.deviceKey);
      const now = clock.now();
      const device: DeviceRow = {
        id: randomUUID(),
        child_id: child.id,
        family_id: child.family_id,
        device_name: name,
        platform_id: optionalText(input.platform_id),
        device_model: optionalText(input.device_model),
        os_version: optionalText(input.os_version),
        app_version: optionalText(input.app_version),
        status: 'active',
        key_prefix: displayPrefix(secret, SECRET_PREFIXES.deviceKey),
        last_seen_at: null,
        acknowledged_version: null,
        enforcement_status: null,
        created_at: now,
        updated_at: now,
        revoked_at: null,
      };
      await deps.writes.run(async (change) => {
        await insertDevice(change.trx, { ...device, key_hash: hashSecret(secret) });
        change.emit(device.family_id, [{ type: 'device.registered', data: deviceJson(device) }]);
        change.audit({
          familyId: device.family_id,
          actor: actorOf(principal),
          action: 'device.registered',
          target: { type: 'device', id: device.id },
          // The key is a secret: neither it nor its prefix is a change the log states.
          changes: auditChanges(
            {
              device_name: device.device_name,
              platform_id: device.platform_id ?? undefined,
              device_model: device.device_model ?? undefined,
              os_version: device.os_version ?? undefined,
              app_version: device.app_version ?? undefined,
            },
            DEVICE_PERSONAL_FIELDS,
          ),
        });
      });
      return { device, device_key: secret };
    },

    async listDevices(principal: Principal, childId: string): Promise<DeviceRow[]> {
      const result = await listDevicesRead(db, childId, tenantOf(principal));
      return deps.families.visibleRows(principal, result, 'id', CHILD_NOT_FOUND);
    },

    /** 204 again when already revoked; the key is dead here and on every other instance. */
    async revokeDevice(principal: Principal, id: string): Promise<void> {
      const device = await requireManagedDevice(principal, id, 'write');
      const revoked = await deps.writes.run(async (change) => {
        const row = await revokeDevice(change.trx, id, clock.now());
        if (row) {
          const current = (await findDevice(change.trx, id)) ?? device;
          change.emit(device.family_id, [{ type: 'device.revoked', data: deviceJson(current) }]);
          // Revoking again changes nothing: no second entry (docs/decisions.md "A repeated
          // revocation writes no audit entry").
          change.audit({
            familyId: device.family_id,
            actor: actorOf(principal),
            action: 'device.revoked',
            target: { type: 'device', id },
            changes: { status: 'revoked' },
          });
        }
        return row;
      });
      if (!revoked) {
        return;
      }
      await keys.invalidate(revoked.key_hash);
      seen.delete(id);
    },

    /** The device behind a presented key, or undefined (unknown or revoked: one answer). */
    async verifyDeviceKey(secret: string): Promise<DeviceIdentity | undefined> {
      if (!isWellFormed(secret, SECRET_PREFIXES.deviceKey)) {
        return undefined;
      }
      return activeIdentity(await keys.lookup(secret));
    },

    /**
     * The same answer for a key verified recently (in memory), else undefined: "not known
     * here", which the caller settles with verifyDeviceKey (the poll's fast path).
     */
    knownDeviceKey(secret: string): DeviceIdentity | undefined {
      return isWellFormed(secret, SECRET_PREFIXES.deviceKey)
        ? activeIdentity(keys.peek(secret))
        : undefined;
    },

    /** Writes the buffered last-seen stamps now (the timer and close do it too). */
    flushSeen: () => seen.flush(),

    close: () => seen.close(),
  };
}

export type DevicesService = ReturnType<typeof createDevicesService>;
