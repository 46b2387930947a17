// Domain events become webhook messages: one message per active webhook of the event's family
// subscribed to its type, stored inside the transaction of the change that caused the event
// (the hub's contract), so a committed change always has its messages and a rolled-back one
// never does. Delivery starts from the committed rows.
import type { EventListener } from '../events/hub.js';
import { type DeliveryQueue, messageBody } from './delivery-queue.js';
import { listSubscribers } from './store.js';

export function webhookFanOut(deps: {
  queue: Pick<DeliveryQueue, 'queueMessagesIn'>;
}): EventListener {
  return async (trx, events, facts) => {
    const [first] = events;
    // Webhooks belong to a family: one this very change made has none yet.
    if (!first || facts.familyCreated) {
      return;
    }
    // One read for the batch (one family's events), then each event to its subscribers.
    const types = [...new Set(events.map((event) => event.type))];
    const webhooks = await listSubscribers(trx, first.familyId, types);
    for (const event of events) {
      const subscribed = webhooks.filter(
        (webhook) => webhook.events.includes(event.type) || webhook.events.includes('*'),
      );
      if (subscribed.length > 0) {
        const body = messageBody(event.type, event.occurredAt, event.familyId, event.data);
        await deps.queue.queueMessagesIn(trx, subscribed, event.type, body);
      }
    }
  };
}
