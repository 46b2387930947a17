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

/** An event as its publisher states it (the hub adds the family and the time). */
export interface EventChange {
  type: EventType;
  data: Record<string, unknown>;
}

/** What the publisher knows about the change as a whole, for listeners to skip reads. */
export interface EventBatchFacts {
  /** The change made the family itself: nothing else of it (connections, webhooks) exists. */
  familyCreated?: boolean;
}

/** Receives the events of one publish call: one family's, in the order they happened. */
export type EventListener = (
  events: readonly DomainEvent[],
  facts: EventBatchFacts,
) => Promise<void>;

export interface EventPublisher {
  publish(type: EventType, familyId: string, data: Record<string, unknown>): Promise<void>;
  /**
   * Several events of one family from one change, in order: each listener gets them together,
   * so what it reads to act on them (a family's webhooks, its connections) it reads once.
   */
  publishAll(
    familyId: string,
    events: readonly EventChange[],
    facts?: EventBatchFacts,
  ): Promise<void>;
}

export function createEventHub(deps: { clock: Clock; log: FastifyBaseLogger }) {
  const listeners: Array<{ name: string; listener: EventListener }> = [];

  async function publishAll(
    familyId: string,
    changes: readonly EventChange[],
    facts: EventBatchFacts = {},
  ) {
    if (changes.length === 0) {
      return;
    }
    const occurredAt = deps.clock.now();
    const events: DomainEvent[] = changes.map(({ type, data }) => ({
      type,
      familyId,
      data,
      occurredAt,
    }));
    for (const { name, listener } of listeners) {
      try {
        await listener(events, facts);
      } catch (error) {
        // The change itself is committed; a subscriber that cannot keep up must not turn it
        // into an error for the caller. The log line names what was missed.
        deps.log.error(
          {
            err: error,
            event_type: events.map((event) => event.type).join(','),
            family_id: familyId,
            subscriber: name,
          },
          'event subscriber failed',
        );
      }
    }
  }

  return {
    subscribe(name: string, listener: EventListener): void {
      listeners.push({ name, listener });
    },

    publish: (type: EventType, familyId: string, data: Record<string, unknown>) =>
      publishAll(familyId, [{ type, data }]),

    publishAll,
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
