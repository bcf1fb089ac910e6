import type { AnyElysia } from 'elysia';
import { toOpenAPISchema } from '@elysiajs/openapi';
import { ERROR_CATALOGUE, isResourceIdParam, type ErrorCode } from '../../lib/errors';
import { SCOPES } from '../tenants/service';
import { AUTH_ERRORS, BODY_ERRORS, groupByStatus, IDEMPOTENCY_ERRORS } from '../../lib/api-doc';
import { ROUTE_SCOPE } from '../../plugins/auth';
import { REFUSES_UNKNOWN_FIELDS } from '../../lib/schemas';
import * as adminModel from '../admin/model';
import * as erpModel from '../erp/model';
import * as esgModel from '../esg/model';
import * as gdprModel from '../gdpr/model';
import * as scoreModel from '../score/model';
import * as webhooksModel from '../webhooks/model';

/**
 * The object schemas the feature models export, by their export name (the spec's §2 resource names:
 * ScoreRequest, ScoreResponse, AdminKey, WebhookEndpoint…): each becomes a named component that
 * operations refer to, so that generated clients get named types instead of one anonymous type per
 * use. Found by identity in the routes' own schemas (which Elysia keeps as given).
 */
const NAMED_SCHEMAS = new Map<object, string>();
for (const mod of [scoreModel, esgModel, erpModel, adminModel, webhooksModel, gdprModel])
  for (const [name, value] of Object.entries(mod))
    if (/^[A-Z]/.test(name) && value && typeof value === 'object' && (value as { type?: unknown }).type === 'object' && !NAMED_SCHEMAS.has(value)) NAMED_SCHEMAS.set(value, name);

/**
 * `generated` (the document's rendering of the TypeBox schema `source`) with every named schema in
 * it, found by walking both along properties and items, replaced by a $ref to its component.
 */
function referNamed(source: unknown, generated: unknown, components: Record<string, unknown>): unknown {
  if (!source || typeof source !== 'object' || !generated || typeof generated !== 'object') return generated;
  const src = source as { properties?: Record<string, unknown>; items?: unknown };
  const gen = generated as { properties?: Record<string, unknown>; items?: unknown };
  if (src.properties && gen.properties) for (const k of Object.keys(gen.properties)) gen.properties[k] = referNamed(src.properties[k], gen.properties[k], components);
  if (src.items && gen.items) gen.items = referNamed(src.items, gen.items, components);
  const name = NAMED_SCHEMAS.get(source);
  if (!name) return generated;
  components[name] ??= generated;
  return { $ref: `#/components/schemas/${name}` };
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': {
    description: "The size of the budget that runs out first: requests per minute for this key (or client address when unauthenticated), or the tenant's daily quota once fewer requests are left in it than in the minute's (and on its 429).",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests that may still be sent before a 429: the smaller of what is left of the per-minute budget and of the daily quota.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'Unix epoch seconds (UTC) at which the budget that X-RateLimit-Limit describes is fully restored: the per-minute allowance, or the daily quota at the next UTC midnight (GitHub convention, not a delay).',
    schema: { type: 'integer' },
  },
  RateLimit: { description: 'IETF draft-ietf-httpapi-ratelimit-headers state: "minute";r=<remaining>;t=<delta seconds>, "daily";r=…;t=…', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF draft policies: "minute";q=<limit>;w=60, "daily";q=<quota>;w=86400', schema: { type: 'string' } },
  'X-Request-Id': { description: 'Identifier of this request; also in every error body as requestId.', schema: { type: 'string' } },
};

const ERROR_SCHEMA = {
  type: 'object',
  required: ['code', 'message', 'status', 'requestId'],
  properties: {
    code: { type: 'string', description: 'Stable machine-readable code; see /docs/errors.' },
    message: { type: 'string' },
    status: { type: 'integer', description: 'The HTTP status, repeated.' },
    requestId: { type: 'string' },
    docsUrl: { type: 'string', format: 'uri', description: 'The code\'s entry in /docs/errors. Optional in the contract (§2.8); this service always sends it.' },
    fields: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    roadmap_url: { type: 'string', format: 'uri', description: 'Only on 503 live_tier_not_available and 501 not_yet_available.' },
  },
};

/** the token endpoint's errors: RFC 6749 §5.2 members for OAuth libraries, beside the §2.8 ones */
const OAUTH_ERROR_SCHEMA = {
  allOf: [
    { $ref: '#/components/schemas/Error' },
    {
      type: 'object',
      required: ['error', 'error_description'],
      properties: {
        error: { type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'rate_limited'], description: 'RFC 6749 §5.2 error code (as `code`, for OAuth libraries).' },
        error_description: { type: 'string', description: 'RFC 6749 §5.2: the same text as `message`.' },
      },
    },
  ],
};

/**
 * Elysia's t.Integer / t.Numeric accept numeric strings and document themselves as
 * anyOf[string(format integer|numeric), integer]: collapse that to the number schema, which is what
 * responses carry and bodies should send. Also drops fragment-only $id values (invalid in 2020-12).
 */
function normalizeSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalizeSchema);
  if (!node || typeof node !== 'object') return node;
  const o = { ...(node as Record<string, unknown>) };
  if (typeof o.$id === 'string' && o.$id.startsWith('#')) delete o.$id;
  const any = o.anyOf as Record<string, unknown>[] | undefined;
  if (any?.length === 2) {
    const str = any.find((x) => x.type === 'string' && (x.format === 'integer' || x.format === 'numeric'));
    const num = any.find((x) => x.type === 'integer' || x.type === 'number');
    if (str && num) {
      delete o.anyOf;
      return normalizeSchema({ ...o, ...num });
    }
  }
  for (const [k, v] of Object.entries(o)) o[k] = normalizeSchema(v);
  return o;
}

/**
 * A request body as the service reads it: its objects ignore unknown fields (Elysia strips them),
 * though Elysia marked each `additionalProperties: false` when it compiled the route; only the
 * objects that refuse them (REFUSES_UNKNOWN_FIELDS) keep the mark. `generated` is a copy of
 * `source`, walked alongside.
 */
function openUnlessRefusing(source: unknown, generated: unknown): unknown {
  if (!source || typeof source !== 'object' || !generated || typeof generated !== 'object') return generated;
  const src = source as Record<string, unknown>;
  const gen = generated as Record<string, unknown>;
  if (gen.type === 'object') {
    if (REFUSES_UNKNOWN_FIELDS.has(src)) gen.additionalProperties = false;
    else if (gen.additionalProperties === false) delete gen.additionalProperties;
  }
  for (const key of ['properties', 'patternProperties'] as const) {
    const [sp, gp] = [src[key] as Record<string, unknown> | undefined, gen[key] as Record<string, unknown> | undefined];
    if (sp && gp) for (const k of Object.keys(gp)) openUnlessRefusing(sp[k], gp[k]);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const [sa, ga] = [src[key] as unknown[] | undefined, gen[key] as unknown[] | undefined];
    if (Array.isArray(sa) && Array.isArray(ga)) ga.forEach((g, i) => openUnlessRefusing(sa[i], g));
  }
  if (src.items && gen.items) openUnlessRefusing(src.items, gen.items);
  return generated;
}

/** said of every resource id in a path (plugins/http-errors.ts answers it so) */
const MALFORMED_ID = 'An id that is not of this form is answered as an unknown one: 404 resource_not_found.';

/** The OpenAPI 3.1.0 document: @elysiajs/openapi's generator over the app's TypeBox schemas, completed with the error contract. */
export function buildOpenApi(app: AnyElysia, serverUrl: string) {
  const generated = toOpenAPISchema(app, undefined, undefined, undefined, '3.1.0') as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
    components: { schemas: Record<string, unknown> };
  };
  // The generator drops request bodies of routes that have a function parser (our JSON-only
  // onParse), so bodies come straight from each route's TypeBox schema.
  const named: Record<string, unknown> = {};
  const bodies = new Map<string, { schema: unknown; required: boolean }>();
  const responseSchemas = new Map<string, Record<string, unknown>>();
  // the scope each secured route's key must hold (on its authentication hook: plugins/auth.ts)
  const scopes = new Map<string, string | null>();
  for (const r of app.routes) {
    const hooks = r.hooks as { body?: Record<PropertyKey, unknown>; response?: Record<string, unknown>; transform?: { fn?: Record<PropertyKey, unknown> }[] } | undefined;
    const route = `${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, '{$1}')}`;
    const authHook = hooks?.transform?.find((h) => h.fn && ROUTE_SCOPE in h.fn);
    if (authHook) scopes.set(route, authHook.fn![ROUTE_SCOPE] as string | null);
    if (hooks?.response && typeof hooks.response === 'object') responseSchemas.set(route, hooks.response);
    const body = hooks?.body;
    if (!body || typeof body !== 'object') continue;
    bodies.set(route, { schema: referNamed(body, openUnlessRefusing(body, JSON.parse(JSON.stringify(body))), named), required: !(Symbol.for('TypeBox.Optional') in body) });
  }
  const headerRefs = Object.fromEntries(Object.keys(RATE_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, ops] of Object.entries(generated.paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (op['x-hidden']) continue;
      const errors = [...((op['x-errors'] as ErrorCode[]) ?? [])];
      delete op['x-errors'];
      const own = op['x-responses'] as Record<string, { description: string; html?: true; location?: true }> | undefined;
      delete op['x-responses'];
      const localised = op['x-localised'] as true | string | undefined;
      delete op['x-localised'];
      const alsoAnswers = op['x-also-answers'] as Record<string, string> | undefined;
      delete op['x-also-answers'];
      const created = op['x-created'] as string | undefined;
      delete op['x-created'];
      const form = op['x-form-body'] as Record<string, unknown> | undefined;
      delete op['x-form-body'];
      const headerParams = op['x-header-params'] as Record<string, string> | undefined;
      delete op['x-header-params'];
      if (headerParams)
        op.parameters = [...((op.parameters as unknown[]) ?? []), ...Object.entries(headerParams).map(([name, description]) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } }))];
      const alternatives = op['x-binary-body'] as { json?: unknown; types: string[]; maxBytes: number; formFields?: Record<string, unknown>; fileExamples?: Record<string, Record<string, { summary: string; value: string }>> } | undefined;
      delete op['x-binary-body'];
      const secured = Array.isArray(op.security) && op.security.length > 0;
      if (secured) errors.push(...AUTH_ERRORS);
      // an OAuth token needs the route's scope (or *), as an API key does
      const scope = scopes.get(`${method} ${path}`);
      if (secured && scope) op.security = (op.security as Record<string, string[]>[]).map((req) => ('oauth2' in req ? { oauth2: [scope] } : req));
      const body = bodies.get(`${method} ${path}`);
      if (form) op.requestBody = { required: true, content: { 'application/x-www-form-urlencoded': { schema: form } } };
      else if (alternatives)
        op.requestBody = {
          required: true,
          description: `${alternatives.json ? 'JSON, or the file' : 'The file'} itself as the body, or a multipart/form-data upload with the file in the part named file (up to ${alternatives.maxBytes} bytes)`,
          content: {
            ...(alternatives.json ? { 'application/json': { schema: alternatives.json, ...(op['x-examples'] ? { examples: op['x-examples'] } : {}) } } : {}),
            ...Object.fromEntries(alternatives.types.map((type) => [type, { schema: { type: 'string', format: 'binary' }, ...(alternatives.fileExamples?.[type] ? { examples: alternatives.fileExamples[type] } : {}) }])),
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['file'],
                properties: { ...(alternatives.formFields ?? {}), file: { type: 'string', format: 'binary', description: `The file (${alternatives.types.join(', ')}); after the other fields` } },
              },
              encoding: { file: { contentType: [...alternatives.types, 'application/octet-stream'].join(', ') } },
            },
          },
        };
      else if (body) op.requestBody = { required: body.required, content: { 'application/json': { schema: body.schema, ...(op['x-examples'] ? { examples: op['x-examples'] } : {}) } } };
      else delete op.requestBody;
      delete op['x-examples'];
      // a JSON body of another method (PATCH) is parsed and checked as a POST's is
      if (method !== 'post' && op.requestBody && !form) errors.push(...BODY_ERRORS);
      if (method === 'post' && !form) {
        errors.push(...BODY_ERRORS, ...IDEMPOTENCY_ERRORS);
        op.parameters = [
          ...((op.parameters as unknown[]) ?? []),
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'Makes the POST safe to retry for 24 h: a replay with the same method, path and body returns the stored response with Idempotent-Replayed: true.',
            schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$', description: 'printable ASCII' },
          },
        ];
      }
      if (localised)
        op.parameters = [
          ...((op.parameters as unknown[]) ?? []),
          { name: 'Accept-Language', in: 'header', required: false, description: typeof localised === 'string' ? localised : 'pt, pt-PT or pt-BR for Portuguese texts; anything else (or none) gives English. The highest q wins.', schema: { type: 'string' } },
        ];
      if (!secured) op.security = []; // public (e.g. the OAuth consent page and callback): no key
      const params = (op.parameters as { in?: string; name?: string; description?: string; schema?: Record<string, unknown> }[] | undefined) ?? [];
      // a resource id in the path: a malformed one is answered as an unknown one (404, never 422)
      const ids = params.filter((p) => p.in === 'path' && isResourceIdParam(p.name ?? '', p.schema));
      for (const p of ids) p.description = `${p.description ? `${p.description.replace(/\.?$/, '.')} ` : ''}${MALFORMED_ID}`;
      if (ids.length) errors.push('resource_not_found');
      // (every API route refuses a query parameter given twice, once the key is judged)
      if (!errors.includes('validation_failed') && (secured || (!own && params.some((p) => p.in === 'query' || (p.in === 'path' && !ids.includes(p)))))) errors.push('validation_failed');
      errors.push('internal_error');
      const responses = (
        own
          ? Object.fromEntries(
              Object.entries(own).map(([status, r]) => [
                status,
                {
                  description: r.description,
                  ...(r.location ? { headers: { Location: { description: 'Where the browser is sent.', schema: { type: 'string', format: 'uri' } } } } : {}),
                  ...(r.html ? { content: { 'text/html': { schema: { type: 'string' } } } } : {}),
                },
              ]),
            )
          : (op.responses ?? {})
      ) as Record<string, Record<string, unknown>>;
      for (const r of Object.values(responses)) r.headers = { ...headerRefs, ...(r.headers as object | undefined) };
      for (const [status, r] of Object.entries(responses))
        if (status.startsWith('2'))
          r.headers = {
            ...headerRefs,
            ...(method === 'post' ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {}),
            ...(localised ? { 'Content-Language': { $ref: '#/components/headers/Content-Language' }, Vary: { $ref: '#/components/headers/Vary' } } : {}),
          };
      if (!own && !Object.keys(responses).some((s) => s.startsWith('2'))) responses['200'] = { description: 'Success', headers: headerRefs };
      if (created)
        for (const [status, r] of Object.entries(responses))
          if (status === '201' || status === '202') r.headers = { ...(r.headers as object), Location: { description: created, schema: { type: 'string', format: 'uri-reference' } } };
      if (alsoAnswers)
        for (const [status, r] of Object.entries(responses))
          if (status.startsWith('2')) {
            r.content = { ...(r.content as object | undefined), ...Object.fromEntries(Object.entries(alsoAnswers).map(([type, description]) => [type, { schema: { type: 'string', format: 'binary', description } }])) };
            r.headers = { ...(r.headers as object), Vary: { $ref: '#/components/headers/Vary' } };
          }
      for (const [status, codes] of groupByStatus(errors)) {
        responses[String(status)] = {
          description: codes.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].meaning}`).join('\n\n'),
          headers: {
            ...headerRefs,
            ...(status === 429 || status === 503 || codes.includes('idempotency_key_in_use') ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
            // a stored 4xx is replayed like a success (errors that nothing was stored for are answered afresh)
            ...(method === 'post' && status >= 400 && status < 500 ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {}),
            ...(status === 401 || codes.includes('insufficient_scope') ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } } : {}),
          },
          content: { 'application/json': { schema: { $ref: path === '/v1/oauth/token' && status < 500 ? '#/components/schemas/OAuthError' : '#/components/schemas/Error' } } },
        };
      }
      const sources = responseSchemas.get(`${method} ${path}`);
      if (sources)
        for (const [status, r] of Object.entries(responses)) {
          const json = (r.content as Record<string, { schema?: unknown }> | undefined)?.['application/json'];
          if (json?.schema && sources[status]) json.schema = referNamed(sources[status], json.schema, named);
        }
      op.responses = responses;
      (paths[path] ??= {})[method] = normalizeSchema(op) as Record<string, unknown>;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Portuguese credit, ESG and ERP connector API',
      version: '1.0.0',
      description:
        'Credit-worthiness scoring by NIF, ESG assessment against EFRAG VSME, an ERP connector for Portuguese accounting software, and tenant administration. Errors always use the Error schema; rate-limit headers are on every /v1 response.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    security: [{ BearerAuth: [] }],
    tags: [
      { name: 'score', description: 'Credit-worthiness scoring' },
      { name: 'esg', description: 'ESG assessment (EFRAG VSME)' },
      { name: 'erp', description: 'ERP connector, SAF-T, invoice QR codes, reconciliation' },
      { name: 'compliance', description: 'NIF lookup, AML screening, KYC' },
      { name: 'finance', description: 'Receivables finance: factoring, confirming, notices of assignment, audit trails, credit insurance' },
      { name: 'admin', description: 'Tenant administration' },
      { name: 'events', description: 'Events and webhooks' },
      { name: 'sandbox', description: 'Sandbox helpers' },
    ],
    paths,
    components: {
      schemas: { ...(normalizeSchema({ ...generated.components.schemas, ...named }) as Record<string, unknown>), Error: ERROR_SCHEMA, OAuthError: OAUTH_ERROR_SCHEMA },
      headers: {
        ...RATE_HEADERS,
        'Retry-After': { description: 'Seconds to wait before retrying. Sent with every 429 (rate_limited, daily_quota_exceeded), with 503 upstream_unavailable and service_busy, and with 409 idempotency_key_in_use; not with the other codes of the same status, which a retry does not cure.', schema: { type: 'integer' } },
        'Idempotent-Replayed': { description: '"true" when this is the stored response of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
        'Content-Language': { description: 'The language of the texts in the body: en, or pt-PT when Accept-Language asked for Portuguese.', schema: { type: 'string', enum: ['en', 'pt-PT'] } },
        Vary: { description: 'The request headers the body depends on (for caches): Accept-Language, and Accept where the route answers JSON or a file.', schema: { type: 'string' } },
        'WWW-Authenticate': { description: 'RFC 6750: on a 401, Bearer realm="api", error="invalid_token" (no error when no credentials were sent); on a 403 insufficient_scope for the route\'s scope, Bearer realm="api", error="insufficient_scope", scope="<the scope needed>".', schema: { type: 'string' } },
      },
      securitySchemes: {
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'API key sk_test_… (sandbox) or sk_live_… (production). Used by scoring, ESG and ERP endpoints.' },
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The same API keys, for admin endpoints (scopes keys:manage, webhooks:manage, gdpr:manage, usage:read or *).' },
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials (spec §5.7): a client created with POST /v1/admin/oauth-clients gets a short-lived access token (a JWT, keys at /.well-known/jwks.json) that is sent as Authorization: Bearer and accepted wherever an API key is, with the client\u2019s scopes.',
          flows: { clientCredentials: { tokenUrl: `${serverUrl}/v1/oauth/token`, scopes: Object.fromEntries(SCOPES.map((s) => [s, s === '*' ? 'every scope (a client created without scopes holds it)' : `the ${s} endpoints`])) } },
        },
      },
    },
  };
}
