import { t } from 'elysia';
import { DateTime, NullableDateTime, Uuid, Int } from '../../lib/schemas';
import { EVENT_TYPES } from '../events/service';

// enum: for the document (TypeBox does not check it on strings); the service names the unknown ones
const EventName = t.String({ enum: [...EVENT_TYPES, '*'], description: `One of ${EVENT_TYPES.join(', ')}, or "*" alone for all events` });
const EndpointUrl = t.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://[^/?#\\s@]+([/?#]\\S*)?$',
  description: 'Absolute http(s) URL with a host and no credentials; https for live keys, and it must resolve to a public address: private, loopback and link-local targets are refused (a sandbox key may target private and loopback addresses where WEBHOOK_ALLOW_PRIVATE_TARGETS is true, the embedded sandbox\'s default; link-local ones, where cloud metadata answers, never)',
});

export const WebhookEndpoint = t.Object(
  {
    id: Uuid,
    url: t.String({ format: 'uri' }),
    description: t.Optional(t.Union([t.String(), t.Null()])),
    enabled_events: t.Array(t.String()),
    signing_secret_prefix: t.String({ description: 'Leading characters of the signing secret only (whsec_…)' }),
    status: t.Union([t.Literal('active'), t.Literal('disabled'), t.Literal('failed')]),
    consecutive_failures: Int(),
    created_at: DateTime,
    last_success_at: t.Optional(NullableDateTime),
    last_failure_at: t.Optional(NullableDateTime),
  },
  { $id: '#/components/schemas/WebhookEndpoint' },
);

export const WebhookEndpointWithSecret = t.Composite([
  t.Omit(WebhookEndpoint, []),
  t.Object({
    signing_secret: t.String({ description: 'The full whsec_ secret, shown this once' }),
    previous_secret_prefix: t.Optional(t.String({ description: 'Rotation: the prefix of the secret replaced, still signed with until previous_secret_expires_at' })),
    previous_secret_expires_at: t.Optional(DateTime),
    ended_secret_prefix: t.Optional(t.Union([t.String(), t.Null()], { description: 'Rotation: the prefix of a secret an earlier rotation had left in its grace period, which this rotation ended now (one earlier secret is kept); null when none' })),
  }),
]);

export const CreateWebhook = t.Object({
  url: EndpointUrl,
  description: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()])),
  enabled_events: t.Array(EventName, { minItems: 1, maxItems: 20, uniqueItems: true }),
});
export const UpdateWebhook = t.Object({
  url: t.Optional(EndpointUrl),
  description: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()])),
  enabled_events: t.Optional(t.Array(EventName, { minItems: 1, maxItems: 20, uniqueItems: true })),
  status: t.Optional(t.Union([t.Literal('active'), t.Literal('disabled')], { description: 'active re-enables a failed endpoint (counter reset)' })),
});
export const IdParams = t.Object({ id: Uuid });
export const DeliveryParams = t.Object({ id: Uuid, delivery_id: Uuid });

export const ReplayQuery = t.Object({
  since: t.String({
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})$',
    description: 'RFC 3339 date-time (e.g. 2026-11-22T10:00:00Z), within the last 30 days: events created at or after it are delivered again',
    examples: ['2026-11-22T10:00:00Z'],
  }),
});
export const ReplayResult = t.Object(
  {
    endpoint_id: Uuid,
    since: DateTime,
    replayed: Int({ description: 'Deliveries queued by this call (each sent once more, in event order)' }),
    endpoint_status: t.Union([t.Literal('active'), t.Literal('disabled'), t.Literal('failed')], { description: 'Deliveries to an endpoint that is not active wait until it is re-enabled' }),
  },
  { $id: '#/components/schemas/WebhookReplayResult' },
);
export const RetryResult = t.Object(
  { delivery_id: Uuid, event_id: t.String(), status: t.Literal('pending') },
  { $id: '#/components/schemas/WebhookDeliveryRetry' },
);

export const Delivery = t.Object({
  id: Uuid,
  event_id: t.String(),
  event_type: t.String(),
  status: t.Union([t.Literal('held'), t.Literal('pending'), t.Literal('succeeded'), t.Literal('failed')], {
    description: 'held: not attempted yet (the endpoint is disabled or failed, or the delivery waits behind older ones); pending: due or waiting for a retry; failed: attempts exhausted',
  }),
  attempts: Int({ description: 'Attempts of the current run (a retry, replay or re-enable starts a new run)' }),
  last_status_code: t.Union([Int(), t.Null()]),
  last_error: t.Union([t.String(), t.Null()]),
  next_attempt_at: NullableDateTime,
  created_at: DateTime,
  updated_at: DateTime,
});

export const EventEnvelope = t.Object({
  id: t.String(),
  type: t.String(),
  created_at: DateTime,
  environment: t.Union([t.Literal('sandbox'), t.Literal('live')]),
  data: t.Record(t.String(), t.Unknown()),
});
