// Domain events (CONTRACT.md §8 event list), published by the module that owns the change,
// after its transaction committed. Subscribers (webhook fan-out, automatic enforcement) run
// before publish() resolves, so a response is sent only once its events are queued.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';

export const EVENT_TYPES = [
  'child.created',
  'child.updated',
  'child.deleted',
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

export type EventListener = (event: DomainEvent) => Promise<void>;

export interface EventPublisher {
  publish(type: EventType, familyId: string, data: Record<string, unknown>): Promise<void>;
}

export function createEventHub(deps: { clock: Clock; log: FastifyBaseLogger }) {
  const listeners: Array<{ name: string; listener: EventListener }> = [];
  return {
    subscribe(name: string, listener: EventListener): void {
      listeners.push({ name, listener });
    },

    async publish(type: EventType, familyId: string, data: Record<string, unknown>) {
      const event: DomainEvent = { type, familyId, data, occurredAt: deps.clock.now() };
      for (const { name, listener } of listeners) {
        try {
          await listener(event);
        } catch (error) {
          // The change itself is committed; a subscriber that cannot keep up must not turn it
          // into an error for the caller. The log line names what was missed.
          deps.log.error(
            { err: error, event_type: type, family_id: familyId, subscriber: name },
            'event subscriber failed',
          );
        }
      }
    },
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
