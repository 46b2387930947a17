// Domain events become webhook messages: one message per active webhook of the event's family
// subscribed to its type. Runs after the change committed (the hub's contract), inside
// publish(), so the caller's response leaves only once the messages are stored.
import type { Db } from '../../db/connect.js';
import type { EventListener } from '../events/hub.js';
import { type DeliveryQueue, messageBody } from './delivery-queue.js';
import { listSubscribers } from './store.js';

export function webhookFanOut(deps: {
  db: Db;
  queue: Pick<DeliveryQueue, 'queueMessages'>;
}): EventListener {
  return async (events, facts) => {
    const [first] = events;
    // Webhooks belong to a family: one this very change made has none yet.
    if (!first || facts.familyCreated) {
      return;
    }
    // One read for the batch (one family's events), then each event to its subscribers.
    const types = [...new Set(events.map((event) => event.type))];
    const webhooks = await listSubscribers(deps.db, first.familyId, types);
    for (const event of events) {
      const subscribed = webhooks.filter(
        (webhook) => webhook.events.includes(event.type) || webhook.events.includes('*'),
      );
      if (subscribed.length > 0) {
        const body = messageBody(event.type, event.occurredAt, event.familyId, event.data);
        await deps.queue.queueMessages(subscribed, event.type, body);
      }
    }
  };
}
