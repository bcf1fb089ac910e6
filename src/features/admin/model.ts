import { t } from 'elysia';
import { DateTime, NullableDateTime, Uuid, Int, Page, RequestDate, RequestDateTime, PageLimit, refusesUnknownFieldsDeep, Text } from '../../lib/schemas';
import { SCOPES } from '../tenants/service';

export const AdminKey = t.Object(
  {
    id: Uuid,
    name: t.String(),
    env: t.Union([t.Literal('sandbox'), t.Literal('live')]),
    key_prefix: t.String({ description: 'Leading characters of the key only' }),
    scopes: t.Array(t.String()),
    rate_limit_per_minute: t.Optional(t.Union([Int(), t.Null()])),
    last_used_at: t.Optional(NullableDateTime),
    revoked_at: t.Optional(NullableDateTime),
    expires_at: t.Optional(NullableDateTime),
    created_at: DateTime,
    status: t.Union([t.Literal('active'), t.Literal('revoked'), t.Literal('expired')]),
  },
  { $id: '#/components/schemas/AdminKey' },
);

export const ListKeysResponse = t.Object({ keys: t.Array(AdminKey) });

export const RotateRequest = refusesUnknownFieldsDeep(t.Optional(
  t.Object({
    api_key_id: t.Optional(t.String({ format: 'uuid', description: 'Key to rotate; default: the calling key' })),
    // TypeBox's own Integer: Elysia's t.Integer would accept the string "7"
    grace_days: t.Optional(Int({ minimum: 0, maximum: 30, default: 7, description: 'Days the old key keeps working (0 = stops now)' })),
  }),
));
export const RotateResponse = t.Object({
  api_key: t.String({ pattern: '^sk_(test|live)_[0-9a-f]{28}$', description: 'The new key, shown once' }),
  api_key_id: t.String({ format: 'uuid' }),
  rotated_from: t.String({ format: 'uuid' }),
  old_expires_at: t.String({ format: 'date-time' }),
  grace_days: Int({ description: 'the grace asked for; old_expires_at is when the old key really stops (earlier if it was already to expire sooner)' }),
  warning: t.String(),
});
export const RevokeRequest = refusesUnknownFieldsDeep(t.Object({
  api_key_id: t.String({ format: 'uuid' }),
  reason: t.Optional(t.String({ maxLength: 256 })),
}));
export const RevokeResponse = t.Object({ revoked: t.Boolean(), revoked_at: t.String({ format: 'date-time' }), api_key_id: t.String() });

export const AuditRecord = t.Object({
  id: t.String(),
  action: t.String({ examples: ['api_key.rotated'], description: 'api_key.created|rotated|revoked, oauth_client.*, webhook_endpoint.*, credit_policy.updated, gdpr.*, tenant.* (operator)' }),
  target: t.Union([t.String(), t.Null()], { description: 'What was changed (a key id, a client id, an endpoint id, the tenant id)' }),
  actor: t.Union([t.Literal('key'), t.Literal('oauth_client'), t.Literal('operator')], { description: 'an API key of the tenant, one of its OAuth clients (by an access token), or the operator (the CLI)' }),
  actor_key_id: t.Union([t.String(), t.Null()], { description: 'The acting API key (for an OAuth client, its principal key: actor_client_id names the client)' }),
  actor_client_id: t.Union([t.String(), t.Null()], { description: 'The acting OAuth client (oc_…), when an access token acted' }),
  request_id: t.Union([t.String(), t.Null()]),
  details: t.Record(t.String(), t.Unknown()),
  created_at: t.String({ format: 'date-time' }),
});
export const AuditLog = Page(AuditRecord);
export const AuditLogQuery = t.Object({
  action: t.Optional(t.String({ maxLength: 64 })),
  target: t.Optional(t.String({ maxLength: 64 })),
  limit: PageLimit,
  cursor: t.Optional(t.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
});

export const UsageQuery = t.Object({
  from: t.Optional(RequestDateTime({ description: 'Inclusive start; default: start of the current UTC month. Calls are counted at the start of their UTC second, so bounds on whole seconds are exact' })),
  to: t.Optional(RequestDateTime({ description: 'Exclusive end; default: the end of the current UTC day' })),
  group_by: t.Optional(t.Union([t.Literal('day'), t.Literal('meter'), t.Literal('key')], { default: 'meter', description: 'meter: one line per meter; day: per UTC day and meter; key: per API key (or OAuth client\u2019s principal key; null for calls made by the service itself, such as nightly re-scores) and meter' })),
  env: t.Optional(t.Union([t.Literal('sandbox'), t.Literal('live')], { description: "Default: the calling key's environment" })),
});
export const UsageResponse = t.Object({
  from: t.String({ format: 'date-time' }),
  to: t.String({ format: 'date-time' }),
  env: t.String(),
  group_by: t.String(),
  totals: t.Array(
    t.Object({
      day: t.Optional(RequestDate()),
      api_key_id: t.Optional(t.Union([t.String(), t.Null()], { description: 'With group_by=key' })),
      client_id: t.Optional(t.Union([t.String(), t.Null()], { description: 'With group_by=key: the OAuth client (oc_…) whose tokens made this usage; null for an API key\u2019s' })),
      meter: t.String(),
      quantity: Int(),
      billable_quantity: Int(),
      amount_cents: t.Number({ description: 'Euro cents; 0 for sandbox usage' }),
    }),
  ),
});

// credential requests refuse fields they do not have: a misspelt `scope` would grant every scope
// of the caller, a `grace_hours` here would leave the old key working for the default 7 days
/** The environment and scopes of a new credential (a key, an OAuth client): within the calling key's. */
export const CredentialEnv = t.Optional(t.Union([t.Literal('sandbox'), t.Literal('live')], { description: 'Must be the calling key\u2019s environment (default)' }));
export const CredentialScopes = (description: string) => t.Optional(t.Array(t.Union(SCOPES.map((s) => t.Literal(s))), { minItems: 1, uniqueItems: true, description }));

export const CreateKeyRequest = refusesUnknownFieldsDeep(t.Object({
  name: Text(100, 'What the key is for (e.g. "portfolio batch job"); not blank'),
  env: CredentialEnv,
  scopes: CredentialScopes('A subset of the calling key\u2019s scopes (default: the same); only a * key may grant *'),
  expires_at: t.Optional(RequestDateTime({ description: 'When the key stops working: no later than the calling key\u2019s own expiry (default: that expiry; never when the caller never expires)' })),
  rate_limit_per_minute: t.Optional(Int({ minimum: 1, maximum: 1_000_000, description: 'At most the calling key\u2019s own limit (default: the caller\u2019s own)' })),
}));
export const CreateKeyResponse = t.Object({
  api_key: t.String({ pattern: '^sk_(test|live)_[0-9a-f]{28}$', description: 'The new key, shown once' }),
  api_key_id: t.String({ format: 'uuid' }),
  name: t.String(),
  env: t.Union([t.Literal('sandbox'), t.Literal('live')]),
  scopes: t.Array(t.String()),
  rate_limit_per_minute: t.Union([Int(), t.Null()]),
  expires_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  created_at: t.String({ format: 'date-time' }),
  warning: t.String(),
});
