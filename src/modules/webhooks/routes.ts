// CONTRACT.md §8 webhook rows: /webhooks, /webhooks/{id}, its test message, its deliveries and
// their retries (read/write:webhooks).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveryParams,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  UpdateWebhookBody,
  Webhook,
  WebhookDelivery,
  WebhookParams,
} from './schemas.js';
import type { WebhooksService } from './service.js';

const TAGS = ['Webhooks'];

export function webhookRoutes(
  webhooks: WebhooksService,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:webhooks' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:webhooks' as const, errors: [401, 403, 404, 409] };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/webhooks',
      {
        config: { ...write, errors: [401, 403, 404, 503] },
        schema: {
          ...route('createWebhook', 'Register a webhook endpoint for a family (owner or parent)'),
          description:
            'Answers the signing secret once. Deliveries follow Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` headers over the JSON body `{type, timestamp, family_id, data}`. The sandbox’s demo family never changes, so a webhook there would never fire: it is refused with 403 `demo family is read-only`.',
          body: CreateWebhookBody,
          response: { 201: CreatedWebhook },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await webhooks.createWebhook(requirePrincipal(request), request.body)),
    );

    app.get(
      '/webhooks',
      {
        config: read,
        schema: {
          ...route('listWebhooks', 'The webhooks of the caller’s families, newest first'),
          querystring: ListWebhooksQuery,
          response: { 200: Type.Array(Webhook) },
        },
      },
      async (request) => webhooks.listWebhooks(requirePrincipal(request), request.query.family_id),
    );

    app.get(
      '/webhooks/:webhookID',
      {
        config: read,
        schema: {
          ...route('getWebhook', 'One webhook'),
          params: WebhookParams,
          response: { 200: Webhook },
        },
      },
      async (request) => webhooks.getWebhook(requirePrincipal(request), request.params.webhookID),
    );

    app.patch(
      '/webhooks/:webhookID',
      {
        config: write,
        schema: {
          ...route('updateWebhook', 'Change a webhook’s URL or events, or enable/disable it'),
          params: WebhookParams,
          body: UpdateWebhookBody,
          response: { 200: Webhook },
        },
      },
      async (request) =>
        webhooks.updateWebhook(requirePrincipal(request), request.params.webhookID, request.body),
    );

    app.delete(
      '/webhooks/:webhookID',
      {
        config: write,
        schema: {
          ...route('deleteWebhook', 'Remove a webhook and its delivery records'),
          params: WebhookParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await webhooks.deleteWebhook(requirePrincipal(request), request.params.webhookID);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/webhooks/:webhookID/test',
      {
        config: write,
        schema: {
          ...route('testWebhook', 'Queue a `test` message to this webhook'),
          params: WebhookParams,
          response: { 202: WebhookDelivery },
        },
      },
      async (request, reply) =>
        reply
          .code(202)
          .send(await webhooks.sendTest(requirePrincipal(request), request.params.webhookID)),
    );

    app.get(
      '/webhooks/:webhookID/deliveries',
      {
        config: read,
        schema: {
          ...route('listWebhookDeliveries', 'Delivery attempts, newest first'),
          params: WebhookParams,
          querystring: ListDeliveriesQuery,
          response: { 200: Type.Array(WebhookDelivery) },
        },
      },
      async (request) =>
        webhooks.listDeliveries(
          requirePrincipal(request),
          request.params.webhookID,
          request.query.limit,
        ),
    );

    app.post(
      '/webhooks/:webhookID/deliveries/:deliveryID/retry',
      {
        config: write,
        schema: {
          ...route('retryWebhookDelivery', 'Send a delivery’s message again, now'),
          description:
            'A new attempt of the same message: the same `webhook-id` and the same body. An attempt of it still waiting is replaced.',
          params: DeliveryParams,
          response: { 202: WebhookDelivery },
        },
      },
      async (request, reply) =>
        reply
          .code(202)
          .send(
            await webhooks.retryDelivery(
              requirePrincipal(request),
              request.params.webhookID,
              request.params.deliveryID,
            ),
          ),
    );
  };
}
