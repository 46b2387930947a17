// Webhook endpoints of a family (CONTRACT.md §8): registered and changed by its owners and
// parents, read by every member. The signing secret is shown once and kept sealed, since every
// delivery needs it in the clear to sign.

import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connect.js';
import type { ChangeRunner } from '../../db/transaction-effects.js';
import { clampPageLimit } from '../../http/common-schemas.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../http/errors.js';
import { actorOf } from '../audit/actor.js';
import { auditChanges } from '../audit/changes.js';
import type { CredentialCipher } from '../connections/credential-cipher.js';
import { EVENT_TYPES } from '../events/hub.js';
import { type FamiliesService, tenantOf } from '../families/service.js';
import { type FamilyFacts, withoutFacts } from '../families/store.js';
import { AddressRefusedError, assertPublicUrl, type HostResolver } from './address-guard.js';
import { type DeliveryQueue, messageBody } from './delivery-queue.js';
import { newSigningSecret, secretBinding } from './signing.js';
import {
  type DeliveryRow,
  deleteWebhook,
  findDelivery,
  findWebhook,
  findWebhookRead,
  insertWebhook,
  listDeliveriesRead,
  listFamilyWebhooksRead,
  listWebhooks,
  updateWebhook,
  type WebhookRow,
} from './store.js';

/** Subscribes to every event type, including types added later. */
export const ALL_EVENTS = '*';
export const DELIVERIES_DEFAULT_LIMIT = 50;

const WEBHOOK_NOT_FOUND = 'webhook not found';
/**
 * Where a family's messages go may name a person or their server: the audit log names the
 * field without its value. The signing secret is never a change the log states.
 */
const WEBHOOK_PERSONAL_FIELDS = ['url'] as const;
const KNOWN_EVENTS = new Set<string>(EVENT_TYPES);

export interface WebhookInput {
  url?: string;
  events?: string[];
  active?: boolean;
}

/** Known types, each once, in the order given; `["*"]` alone means all. */
function checkEvents(events: readonly string[]): string[] {
  if (events.length === 0) {
    throw new BadRequestError('events must not be empty');
  }
  if (events.includes(ALL_EVENTS)) {
    if (events.some((name) => name !== ALL_EVENTS)) {
      throw new BadRequestError('"*" (every event) cannot be combined with other event types');
    }
    return [ALL_EVENTS];
  }
  const unknown = events.find((name) => !KNOWN_EVENTS.has(name));
  if (unknown !== undefined) {
    throw new BadRequestError(`unknown event type: ${unknown}`);
  }
  return [...new Set(events)];
}

/** A delivery as the API shows it: the body it sends stays internal. */
function presentDelivery({ payload: _payload, ...delivery }: DeliveryRow) {
  return delivery;
}

export function createWebhooksService(deps: {
  db: Db;
  clock: Clock;
  /** Production: https only, public addresses only. */
  publicOnly: boolean;
  resolve: HostResolver;
  families: Pick<
    FamiliesService,
    'requireFamily' | 'listFamilies' | 'checkThrough' | 'visibleRows'
  >;
  cipher: CredentialCipher;
  writes: ChangeRunner;
  queue: Pick<DeliveryQueue, 'queueMessagesIn' | 'retryMessageIn' | 'wakeAfterCommit'>;
}) {
  const { db, clock } = deps;

  async function checkUrl(url: string): Promise<string> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new BadRequestError('url must be an absolute http(s) URL');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new BadRequestError('url must be an absolute http(s) URL');
    }
    if (deps.publicOnly) {
      try {
        await assertPublicUrl(parsed, deps.resolve);
      } catch (error) {
        throw error instanceof AddressRefusedError ? new BadRequestError(error.message) : error;
      }
    }
    return url;
  }

  /** One statement: the webhook and whether the caller sees its family. */
  async function requireWebhook(
    principal: Principal,
    id: string,
    access: 'read' | 'write',
  ): Promise<WebhookRow> {
    const row = await findWebhookRead(db, id, tenantOf(principal));
    // A webhook of a family the caller cannot see does not exist for it.
    deps.families.checkThrough(principal, row, WEBHOOK_NOT_FOUND, { access });
    return withoutFacts(row as WebhookRow & FamilyFacts);
  }

  function requireActive(webhook: WebhookRow): void {
    if (!webhook.active) {
      throw new ConflictError('webhook is not active: PATCH it with {"active": true} first');
    }
  }

  return {
    async createWebhook(
      principal: Principal,
      input: { family_id: string; url: string; events: string[] },
    ) {
      await deps.families.requireFamily(principal, input.family_id, 'write');
      const events = checkEvents(input.events);
      const url = await checkUrl(input.url);
      const id = randomUUID();
      const secret = newSigningSecret();
      const sealed = deps.cipher.seal(secret, secretBinding(id));
      const now = clock.now();
      const created = await deps.writes.run(async (change) => {
        await insertWebhook(change.trx, {
          id,
          family_id: input.family_id,
          url,
          events,
          secret: sealed.sealed,
          secret_key_id: sealed.keyId,
          active: true,
          failing_since: null,
          disabled_reason: null,
          created_at: now,
          updated_at: now,
        });
        change.audit({
          familyId: input.family_id,
          actor: actorOf(principal),
          action: 'webhook.created',
          target: { type: 'webhook', id },
          changes: auditChanges({ url, events, active: true }, WEBHOOK_PERSONAL_FIELDS),
        });
        return (await findWebhook(change.trx, id)) as WebhookRow;
      });
      return { ...created, secret };
    },

    async listWebhooks(principal: Principal, familyId?: string) {
      if (familyId !== undefined) {
        const result = await listFamilyWebhooksRead(db, familyId, tenantOf(principal));
        return deps.families.visibleRows(principal, result, 'id');
      }
      const families = await deps.families.listFamilies(principal);
      return listWebhooks(
        db,
        families.map((family) => family.id),
      );
    },

    getWebhook: (principal: Principal, id: string) => requireWebhook(principal, id, 'read'),

    async updateWebhook(principal: Principal, id: string, input: WebhookInput) {
      const webhook = await requireWebhook(principal, id, 'write');
      const reactivated = input.active === true && !webhook.active;
      const changed = {
        url: input.url !== undefined ? await checkUrl(input.url) : undefined,
        events: input.events !== undefined ? checkEvents(input.events) : undefined,
        active: input.active,
      };
      return deps.writes.run(async (change) => {
        const row = await updateWebhook(change.trx, id, {
          ...(changed.url !== undefined ? { url: changed.url } : {}),
          ...(changed.events !== undefined ? { events: changed.events } : {}),
          ...(changed.active !== undefined ? { active: changed.active } : {}),
          // A re-enabled endpoint starts with a clean record: five more days before disabling.
          ...(reactivated ? { failing_since: null, disabled_reason: null } : {}),
          ...(input.active === false ? { disabled_reason: null } : {}),
          updated_at: clock.now(),
        });
        change.audit({
          familyId: webhook.family_id,
          actor: actorOf(principal),
          action: 'webhook.updated',
          target: { type: 'webhook', id },
          changes: auditChanges(changed, WEBHOOK_PERSONAL_FIELDS),
        });
        return row;
      });
    },

    async deleteWebhook(principal: Principal, id: string): Promise<void> {
      const webhook = await requireWebhook(principal, id, 'write');
      await deps.writes.run(async (change) => {
        if (!(await deleteWebhook(change.trx, id))) {
          return; // deleted meanwhile by another request: that one said so
        }
        change.audit({
          familyId: webhook.family_id,
          actor: actorOf(principal),
          action: 'webhook.deleted',
          target: { type: 'webhook', id },
          changes: {},
        });
      });
    },

    /** A `test` message to this webhook alone, whatever it subscribes to. */
    async sendTest(principal: Principal, id: string) {
      const webhook = await requireWebhook(principal, id, 'write');
      requireActive(webhook);
      const body = messageBody('test', clock.now(), webhook.family_id, {
        webhook_id: webhook.id,
        message: 'a test delivery from Haven',
      });
      const queued = await deps.writes.run(async (change) => {
        const [row] = await deps.queue.queueMessagesIn(change.trx, [webhook], 'test', body);
        const delivery = row as DeliveryRow;
        change.audit({
          familyId: webhook.family_id,
          actor: actorOf(principal),
          action: 'webhook.test_sent',
          target: { type: 'webhook', id: webhook.id },
          changes: { event: 'test', delivery_id: delivery.id },
        });
        return delivery;
      });
      deps.queue.wakeAfterCommit();
      return presentDelivery(queued);
    },

    async listDeliveries(principal: Principal, id: string, limit = DELIVERIES_DEFAULT_LIMIT) {
      // Like the other capped lists, more than the maximum is clamped, not refused.
      const result = await listDeliveriesRead(db, id, tenantOf(principal), clampPageLimit(limit));
      return deps.families
        .visibleRows(principal, result, 'id', WEBHOOK_NOT_FOUND)
        .map(({ seq: _seq, ...row }) => presentDelivery(row));
    },

    async retryDelivery(principal: Principal, id: string, deliveryId: string) {
      const webhook = await requireWebhook(principal, id, 'write');
      const delivery = await findDelivery(db, deliveryId);
      if (!delivery || delivery.webhook_id !== webhook.id) {
        throw new NotFoundError('delivery not found');
      }
      requireActive(webhook);
      const retried = await deps.writes.run(async (change) => {
        const row = await deps.queue.retryMessageIn(change.trx, delivery);
        change.audit({
          familyId: webhook.family_id,
          actor: actorOf(principal),
          action: 'webhook.delivery_retried',
          target: { type: 'webhook_delivery', id: delivery.id },
          changes: { webhook_id: webhook.id, delivery_id: row.id, attempt: row.attempt },
        });
        return row;
      });
      deps.queue.wakeAfterCommit();
      return presentDelivery(retried);
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
