import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import type { Db } from '../../db/client';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { validationError } from '../../lib/errors';
import { Page, PageQuery } from '../../lib/schemas';
import { actorOf, AdminService, type Actor } from '../admin/service';
import { EVENT_TYPES } from '../events/service';
import { CreateWebhook, Delivery, DeliveryParams, EventEnvelope, IdParams, ReplayQuery, ReplayResult, RetryResult, UpdateWebhook, WebhookEndpoint, WebhookEndpointWithSecret } from './model';
import { endpointView, WebhookService } from './service';

/** cursors of event lists are event ids; anything else is a client bug worth a 422, not a silent first page */
const EventCursor = t.Optional(t.String({ pattern: '^evt_[0-9a-f]{32}$', description: 'next_cursor of the previous page' }));

export function webhookService(ctx: AppContext) {
  const service = new WebhookService(ctx.database, ctx.secretBox, ctx.events, ctx.config, () => ctx.clock.now(), ctx.log);
  service.onAttempt = (outcome) => ctx.metrics.webhookAttempt(outcome);
  // an endpoint with held deliveries to catch up: its drain sends them one at a time, in event order
  const drain = (endpointId: string) => void ctx.jobs.enqueue('webhook.drain', { endpointId }, { jobId: `drain:${endpointId}` }).catch(() => {});
  service.onBacklog = drain;
  ctx.events.onBacklog = drain;
  return service;
}

export function webhookRoutes(ctx: AppContext, service: WebhookService) {
  const admin = new AdminService(ctx.database, ctx.tenants, () => ctx.clock.now());
  const auditor = (auth: Actor) => (tx: Db, action: string, target: string, details?: Record<string, unknown>) => admin.audit(tx, actorOf(auth), action, target, details);
  const doc = (summary: string, operationId: string, errors: Parameters<typeof apiDoc>[0]['errors'] = [], extra: { description?: string } = {}) =>
    apiDoc({ summary, tag: 'events', security: 'bearerAuth', operationId, errors, ...extra });
  const kick = (deliveryId: string) => ctx.jobs.enqueue('webhook.deliver', { deliveryId }, { jobId: `${deliveryId}:0` });

  return new Elysia({ name: 'webhooks' })
    .use(authed(ctx, 'webhooks:manage'))
    .get('/v1/admin/webhooks', async ({ auth }) => ({ webhooks: (await service.list(auth)).map(endpointView) }), {
      response: { 200: t.Object({ webhooks: t.Array(WebhookEndpoint) }) },
      detail: doc('List webhook endpoints', 'listWebhooks'),
    })
    .post(
      '/v1/admin/webhooks',
      async ({ auth, body, set }) => {
        const created = await service.create(auth, body, auditor(auth));
        set.status = 201;
        set.headers.location = `/v1/admin/webhooks/${created.id}`;
        return created;
      },
      {
        body: CreateWebhook,
        response: { 201: WebhookEndpointWithSecret },
        detail: doc('Create a webhook endpoint (the signing secret is shown once)', 'createWebhook'),
      },
    )
    .get('/v1/admin/webhooks/:id', async ({ auth, params }) => endpointView(await service.get(auth, params.id)), {
      params: IdParams,
      response: { 200: WebhookEndpoint },
      detail: doc('One webhook endpoint', 'getWebhook', ['resource_not_found']),
    })
    .patch(
      '/v1/admin/webhooks/:id',
      ({ auth, params, body }) => {
        // unknown fields are dropped: a PATCH left with nothing to change was most likely misspelt
        // (e.g. "events" for enabled_events) and must not answer 200 as if it had done something
        if (Object.keys(body).length === 0) throw validationError([{ path: '(body)', message: `must set at least one of: ${Object.keys(UpdateWebhook.properties).join(', ')}` }]);
        return service.update(auth, params.id, body, auditor(auth));
      },
      {
        params: IdParams,
        body: UpdateWebhook,
        response: { 200: WebhookEndpoint },
        detail: doc('Update a webhook endpoint (url, description, enabled_events, status; at least one). Re-enabling sends what the endpoint missed, in event order', 'updateWebhook', ['resource_not_found', 'invalid_json', 'unsupported_media_type', 'payload_too_large']),
      },
    )
    .delete('/v1/admin/webhooks/:id', ({ auth, params }) => service.remove(auth, params.id, auditor(auth)), {
      params: IdParams,
      response: { 200: t.Object({ id: t.String(), deleted: t.Boolean() }) },
      detail: doc('Delete a webhook endpoint', 'deleteWebhook', ['resource_not_found']),
    })
    .post(
      '/v1/admin/webhooks/:id/test',
      async ({ auth, params, set }) => {
        const res = await service.sendTest(auth, params.id);
        await kick(res.delivery_id);
        set.status = 202;
        return res;
      },
      {
        params: IdParams,
        response: { 202: t.Object({ event_id: t.String(), delivery_id: t.String() }) },
        detail: doc('Send a webhook.test event to this endpoint', 'testWebhook', ['resource_not_found', 'webhook_endpoint_inactive']),
      },
    )
    .post(
      '/v1/admin/webhooks/:id/rotate-secret',
      ({ auth, params }) => service.rotateSecret(auth, params.id, auditor(auth)),
      {
        params: IdParams,
        response: { 200: WebhookEndpointWithSecret },
        detail: doc('Rotate the signing secret; the old one keeps signing beside it for 24 h', 'rotateWebhookSecret', ['resource_not_found']),
      },
    )
    .post(
      '/v1/admin/webhooks/:id/replay',
      async ({ auth, params, query, set }) => {
        const res = await service.replay(auth, params.id, query.since, auditor(auth));
        set.status = 202;
        return res;
      },
      {
        params: IdParams,
        query: ReplayQuery,
        response: { 202: ReplayResult },
        detail: doc('Deliver again every event since a time (at most 30 days back), in event order', 'replayWebhook', ['resource_not_found', 'validation_failed'], {
          description:
            "Queues a new delivery run, to this endpoint only, of every event created at or after `since` that the endpoint subscribes to (including events that never got a delivery). They are sent one at a time in event order; a delivery whose attempt is in flight is left as it is. An endpoint that is disabled or failed receives them once it is re-enabled. Answers 202 with the number of deliveries queued.",
        }),
      },
    )
    .post(
      '/v1/admin/webhooks/:id/deliveries/:delivery_id/retry',
      async ({ auth, params, set }) => {
        const res = await service.retryDelivery(auth, params.id, params.delivery_id, auditor(auth));
        await ctx.jobs.enqueue('webhook.deliver', { deliveryId: res.delivery_id }, { jobId: `${res.delivery_id}:retry:${Date.now()}` });
        set.status = 202;
        return res;
      },
      {
        params: DeliveryParams,
        response: { 202: RetryResult },
        detail: doc('Send one delivery again now (also a succeeded one), with a fresh retry schedule', 'retryWebhookDelivery', ['resource_not_found', 'webhook_endpoint_inactive', 'webhook_delivery_in_flight']),
      },
    )
    .get('/v1/admin/webhooks/:id/deliveries', ({ auth, params, query }) => service.deliveries(auth, params.id, { limit: query.limit ?? 50, cursor: query.cursor }), {
      params: IdParams,
      query: t.Object({ ...PageQuery, cursor: EventCursor }),
      response: { 200: Page(Delivery) },
      detail: doc('Delivery attempts of an endpoint, newest first', 'listWebhookDeliveries', ['resource_not_found', 'validation_failed']),
    })
    .get(
      '/v1/events',
      ({ auth, query }) =>
        ctx.events.list(auth.tenantId, auth.env, { limit: query.limit ?? 50, cursor: query.cursor, types: query.type?.split(',').filter(Boolean) }),
      {
        query: t.Object({
          ...PageQuery,
          cursor: EventCursor,
          type: t.Optional(t.String({ pattern: `^(${EVENT_TYPES.map((e) => e.replaceAll('.', '\\.')).join('|')})(,(${EVENT_TYPES.map((e) => e.replaceAll('.', '\\.')).join('|')}))*$`, description: `Comma-separated event types: ${EVENT_TYPES.join(', ')}` })),
        }),
        response: { 200: Page(EventEnvelope) },
        detail: doc("The tenant's events, newest first (beta)", 'listEvents', ['validation_failed']),
      },
    );
}
