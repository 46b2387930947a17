// Shapes of webhooks and their delivery attempts (CONTRACT.md §8).
import { Type } from 'typebox';
import { DateTime, MAX_PAGE_LIMIT, NullableDateTime, Uuid } from '../../http/common-schemas.js';
import { EVENT_TYPES } from '../events/hub.js';
import { DELIVERIES_DEFAULT_LIMIT } from './service.js';

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 64,
  description: `event types to receive (${EVENT_TYPES.join(', ')}), or ["*"] for every type, including types added later`,
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'where deliveries are POSTed; in production https to a public address',
});

const webhookFields = {
  id: Uuid(),
  family_id: Uuid(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  active: Type.Boolean({
    description: 'false: receives nothing (disabled by hand, or after 5 days of failures)',
  }),
  failing_since: NullableDateTime(
    'when the current run of failed deliveries began; null while healthy',
  ),
  disabled_reason: Type.Union([Type.String(), Type.Null()], {
    description: 'why Haven disabled the webhook (null when enabled or disabled by hand)',
  }),
  created_at: DateTime(),
  updated_at: DateTime(),
};

export const Webhook = Type.Object(webhookFields, { $id: 'Webhook' });

export const CreatedWebhook = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({
      description: 'the Standard Webhooks signing secret (whsec_…); shown only in this response',
    }),
  },
  { $id: 'CreatedWebhook' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Uuid(),
    webhook_id: Uuid(),
    message_id: Type.String({
      description: 'the webhook-id header it was sent with; the same on every attempt of a message',
    }),
    event: Type.String(),
    status: Type.Enum(['pending', 'succeeded', 'failed']),
    response_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'the HTTP status the endpoint answered; null when none came back',
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'why the attempt failed (timeout, refused address, non-2xx answer, …)',
    }),
    attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt of a message' }),
    next_retry_at: NullableDateTime('when the next automatic attempt runs, after a failure'),
    created_at: DateTime(),
    attempted_at: NullableDateTime('when the request was made; null while pending'),
  },
  { $id: 'WebhookDelivery' },
);

export const CreateWebhookBody = Type.Object({
  family_id: Uuid(),
  url: Url,
  events: Events,
});

export const UpdateWebhookBody = Type.Object({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  active: Type.Optional(
    Type.Boolean({ description: 'true re-enables a disabled webhook and clears its failures' }),
  ),
});

export const WebhookParams = Type.Object({ webhookID: Uuid() });
export const DeliveryParams = Type.Object({ webhookID: Uuid(), deliveryID: Uuid() });

export const ListWebhooksQuery = Type.Object({
  family_id: Type.Optional(
    Type.String({
      format: 'uuid',
      'x-error-message': 'invalid family ID',
      description: 'only this family’s webhooks',
    }),
  ),
});

export const ListDeliveriesQuery = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    default: DELIVERIES_DEFAULT_LIMIT,
    description: `at most this many, newest first; more than ${MAX_PAGE_LIMIT} is treated as ${MAX_PAGE_LIMIT}`,
  }),
});
