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
  return async (event) => {
    const webhooks = await listSubscribers(deps.db, event.familyId, event.type);
    if (webhooks.length === 0) {
      return;
    }
    const body = messageBody(event.type, event.occurredAt, event.familyId, event.data);
    await deps.queue.queueMessages(webhooks, event.type, body);
  };
}
