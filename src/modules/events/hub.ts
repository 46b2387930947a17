// Domain events (CONTRACT.md §8 event list), stated by the module that owns the change
// (`change.emit`, db/transaction-effects.ts) and handed to subscribers (webhook fan-out,
// automatic enforcement) inside the change's transaction, before its commit: a response is
// sent only once its events' messages and jobs are committed with it.
import type { Transaction } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/schema.js';
import type { ChangeFacts, EffectSink } from '../../db/transaction-effects.js';

export const EVENT_TYPES = [
  'child.created',
  'child.updated',
  'child.deleted',
  'child.age_changed',
  'child.came_of_age',
  'child.age_signal',
  'policy.created',
  'policy.updated',
  'policy.activated',
  'policy.paused',
  'enforcement.completed',
  'enforcement.partial',
  'enforcement.failed',
  'device.registered',
  'device.revoked',
  'device.report',
  'device.acknowledged',
  'connection.created',
  'connection.deleted',
  'test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface DomainEvent {
  type: EventType;
  familyId: string;
  /** The resource as the API shows it (JSON-ready: no Dates, no secrets). */
  data: Record<string, unknown>;
  occurredAt: Date;
}

/**
 * Receives the events of one change for one family, in the order they happened, inside the
 * change's transaction: whatever it queues (webhook messages, enforcement jobs) it writes
 * through `trx`, so it commits with the change or not at all. An error rolls the change back.
 * `events` may be empty when the change stated only facts about the family.
 */
export type EventListener = (
  trx: Transaction<Database>,
  events: readonly DomainEvent[],
  facts: ChangeFacts,
  familyId: string,
) => Promise<void>;

export function createEventHub(deps: { clock: Clock }) {
  const listeners: Array<{ name: string; listener: EventListener }> = [];

  /** The hub as a sink of every change (db/transaction-effects.ts). */
  const sink: EffectSink = async (trx, effects) => {
    const occurredAt = deps.clock.now();
    for (const { familyId, events: stated, facts } of effects.families) {
      const events: DomainEvent[] = stated.map(({ type, data }) => ({
        type: type as EventType,
        familyId,
        data,
        occurredAt,
      }));
      for (const { listener } of listeners) {
        await listener(trx, events, facts, familyId);
      }
    }
  };

  return {
    subscribe(name: string, listener: EventListener): void {
      listeners.push({ name, listener });
    },
    sink,
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
