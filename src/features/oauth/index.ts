import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import { authed, limitAnonymous } from '../../plugins/auth';
import { readCapped } from '../../plugins/http-errors';
import { oauthDescription, severalAuthorizations } from '../../lib/text';
import { apiDoc, routeDocs } from '../../lib/api-doc';
import { ApiError, type ErrorCode } from '../../lib/errors';
import { actorOf, AdminService } from '../admin/service';
import { effectiveRateLimit, SCOPES } from '../tenants/service';
import { rateLimitHeaders } from '../../lib/rate-limiter';
import { requestState } from '../../plugins/request-state';
import { OAuthClients } from './clients';
import { OAuthTokens } from './tokens';
import { CredentialEnv, CredentialScopes } from '../admin/model';
import { Int, refusesUnknownFieldsDeep, Text } from '../../lib/schemas';
import { closedBody } from '../../lib/request-problems';

export { OAuthTokens } from './tokens';

type ServerLike = Parameters<typeof limitAnonymous>[2];
type OAuthError = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope';

/**
 * RFC 6749 §5.2 `error` and `error_description`, in the §2.8 body. invalid_client is 401 with a
 * Basic challenge. The description may quote what was sent (a scope): it keeps to the characters
 * §5.2 allows (printable ASCII but " and \), anything else shown as "?".
 */
const oauthError = (error: OAuthError, text: string) => {
  const description = oauthDescription(text);
  return new ApiError(error satisfies ErrorCode, description, {
    body: { error, error_description: description },
    headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...(error === 'invalid_client' ? { 'www-authenticate': 'Basic realm="oauth", charset="UTF-8"' } : {}) },
  });
};

/** a 429 at the token endpoint, with the RFC 6749 members beside the §2.8 ones (OAuth libraries read `error`) */
const oauthRateLimited = (err: ApiError) =>
  new ApiError('rate_limited', err.message, { body: { error: 'rate_limited', error_description: err.message }, headers: { ...err.extra.headers, 'cache-control': 'no-store', pragma: 'no-cache' } });

// credential requests refuse fields they do not have (a misspelt `scope` would grant every scope of the caller)
const CreateClientRequest = refusesUnknownFieldsDeep(
  t.Object({
    name: Text(100, 'What the client is for; not blank'),
    env: CredentialEnv,
    scopes: CredentialScopes('A subset of the calling key\u2019s scopes (default: the same)'),
    rate_limit_per_minute: t.Optional(Int({ minimum: 1, maximum: 1_000_000, description: 'At most the calling key\u2019s own limit' })),
  }),
);
const RotateSecretRequest = refusesUnknownFieldsDeep(
  t.Optional(t.Object({ grace_hours: t.Optional(Int({ minimum: 0, maximum: 168, default: 24, description: 'Hours the old secret keeps working (0: stops now)' })) })),
);
const ClientView = t.Object({
  client_id: t.String({ pattern: '^oc_[0-9a-f]{24}$' }),
  name: t.String(),
  env: t.Union([t.Literal('sandbox'), t.Literal('live')]),
  scopes: t.Array(t.String()),
  rate_limit_per_minute: t.Union([Int(), t.Null()]),
  secret_prefix: t.String({ description: 'The first characters of the current secret, to tell secrets apart' }),
  previous_secret_expires_at: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'Until when the secret before the last rotation is still accepted' }),
  created_at: t.String({ format: 'date-time' }),
});
const ClientWithSecret = t.Composite([ClientView, t.Object({ client_secret: t.String({ description: 'Shown once' }), warning: t.String() })]);
const ClientIdParams = t.Object({ id: t.String({ pattern: '^oc_[0-9a-f]{24}$' }) });
export const TokenResponse = t.Object({
  access_token: t.String({ description: 'A JWT (ES256, typ at+jwt): verify it with /.well-known/jwks.json if you need to' }),
  token_type: t.Literal('Bearer'),
  expires_in: Int({ description: 'Seconds (OAUTH_TOKEN_TTL_SECONDS, default 900)' }),
  scope: t.String({ description: 'Space-separated scopes granted' }),
});

/** the token request's parameters (RFC 6749 §3.2) */
const TOKEN_PARAMS = ['grant_type', 'scope', 'client_id', 'client_secret'] as const;
/**
 * The token request's parameters, by RFC 6749 §3.2: one sent without a value is as if omitted,
 * an unrecognised one is ignored, and a recognised one may not be given twice.
 */
function tokenParams(form: URLSearchParams): Map<(typeof TOKEN_PARAMS)[number], string> {
  const params = new Map<(typeof TOKEN_PARAMS)[number], string>();
  for (const name of TOKEN_PARAMS) {
    const values = form.getAll(name).filter((v) => v !== '');
    if (values.length > 1) throw oauthError('invalid_request', `The parameter ${name} is repeated.`);
    if (values.length) params.set(name, values[0]!);
  }
  return params;
}

/** HTTP Basic client authentication (RFC 6749 §2.3.1: both parts form-urlencoded before base64). */
function basicCredentials(authorization: string | null): { id: string; secret: string } | null | 'malformed' {
  if (!authorization || !/^basic\s/i.test(authorization)) return null;
  const encoded = authorization.slice(6).trim();
  // Buffer's decoder skips what is not base64: "Basic <a> junk" would pass as <a>
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return 'malformed';
  try {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i < 0) return 'malformed';
    return { id: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' ')) };
  } catch {
    return 'malformed';
  }
}

/** OAuth 2.0 client credentials: the token endpoint, the signing keys, the server metadata, and the clients' administration. */
export function oauthRoutes(ctx: AppContext, tokens: OAuthTokens) {
  const admin = new AdminService(ctx.database, ctx.tenants, () => ctx.clock.now());
  const clients = new OAuthClients(ctx, admin);
  const doc = routeDocs('admin', 'bearerAuth');

  /** the token request's client, authenticated, and its form; otherwise its RFC 6749 error */
  const authenticateTokenRequest = async (request: Request) => {
    if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers.get('content-type') ?? '')) throw oauthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
    const text = await readCapped(request, 4096);
    if (text === null) throw oauthError('invalid_request', 'The body exceeds 4096 bytes.');
    const params = tokenParams(new URLSearchParams(text));
    const grant = params.get('grant_type');
    if (!grant) throw oauthError('invalid_request', 'grant_type is missing.');
    if (grant !== 'client_credentials') throw oauthError('unsupported_grant_type', `grant_type ${grant.slice(0, 40)} is not supported; use client_credentials.`);
    const authorization = request.headers.get('authorization');
    if (severalAuthorizations(authorization)) throw oauthError('invalid_request', 'Send one Authorization header: this request carries several.');
    const basic = basicCredentials(authorization);
    if (basic === 'malformed') throw oauthError('invalid_client', 'The Basic credentials are malformed.');
    const posted = params.has('client_id') || params.has('client_secret');
    if (basic && params.has('client_secret')) throw oauthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret_post, not both.');
    const id = basic ? basic.id : params.get('client_id');
    const secret = basic ? basic.secret : params.get('client_secret');
    if (basic && params.has('client_id') && params.get('client_id') !== basic.id) throw oauthError('invalid_request', 'client_id differs from the Basic credentials.');
    if (!id || !secret) throw oauthError('invalid_client', posted || basic ? 'The client secret is missing.' : 'Authenticate the client: HTTP Basic (client_id:client_secret) or client_id and client_secret in the body.');
    const found = await clients.authenticate(id, secret);
    if (!found) throw oauthError('invalid_client', 'Unknown client or wrong secret.');
    return { ...found, params };
  };

  const endpoint = new Elysia({ name: 'oauth-token' })
    .post(
      '/v1/oauth/token',
      async ({ request, server, set }) => {
        set.headers['cache-control'] = 'no-store';
        set.headers.pragma = 'no-cache';
        // an authenticated client is charged its own budget (below); a request that fails before
        // that is charged its address's anonymous one, and past it answered 429: so one address's
        // bad requests (or a load balancer's, shared by every customer) never refuse a good client
        const found = await authenticateTokenRequest(request).catch(async (err: unknown) => {
          const over = await limitAnonymous(ctx, request, server as ServerLike, set);
          throw over ? oauthRateLimited(over) : err;
        });
        const nowMs = ctx.clock.now().getTime();
        const budget = await ctx.limiter.consume({ bucket: `key:${found.key.id}`, limitPerMinute: effectiveRateLimit(found.tenant, found.key), nowMs });
        const rate = rateLimitHeaders(budget, nowMs);
        requestState(request).rateHeaders = rate;
        Object.assign(set.headers, rate);
        if (!budget.allowed) throw oauthRateLimited(new ApiError('rate_limited', "The client's rate limit is reached.", { headers: { 'retry-after': rate['retry-after']! } }));
        if (found.tenant.status !== 'active') throw oauthError('unauthorized_client', `The client's tenant is ${found.tenant.status}.`);
        const granted = found.key.scopes;
        const requested = found.params.get('scope');
        let scopes = granted;
        if (requested !== undefined) {
          const asked = requested.split(' ').filter(Boolean);
          const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
          const refused = asked.filter((s) => !granted.includes('*') && !granted.includes(s));
          if (!asked.length || unknown.length || refused.length)
            throw oauthError('invalid_scope', unknown.length ? `Unknown scope(s): ${unknown.join(' ').slice(0, 200)}.` : refused.length ? `Not granted to this client: ${refused.join(' ')}.` : 'scope is empty.');
          scopes = [...new Set(asked)];
        }
        return tokens.issue({ id: found.client.id, tenantId: found.client.tenantId, env: found.client.env }, scopes);
      },

      {
        response: { 200: TokenResponse },
        detail: apiDoc({
          summary: 'OAuth 2.0 token endpoint (client credentials)',
          description:
            'RFC 6749 §4.4: grant_type=client_credentials, optional scope (a subset of the client\u2019s), the client authenticated by HTTP Basic or client_secret_post. The access token is a short-lived JWT accepted wherever an API key is (Authorization: Bearer …), with the client\u2019s scopes, rate limit and usage attribution. Errors carry RFC 6749 §5.2 error and error_description as well as the §2.8 fields; invalid_client is 401 with WWW-Authenticate: Basic. Cache-Control: no-store.',
          tag: 'admin',
          security: null,
          operationId: 'oauthToken',
          errors: ['invalid_request', 'invalid_client', 'unsupported_grant_type', 'invalid_scope', 'unauthorized_client', 'rate_limited'],
          formBody: {
            type: 'object',
            required: ['grant_type'],
            properties: {
              grant_type: { type: 'string', enum: ['client_credentials'] },
              scope: { type: 'string', description: 'Space-separated scopes, a subset of the client\u2019s (default: all of them)' },
              client_id: { type: 'string', description: 'client_secret_post only' },
              client_secret: { type: 'string', description: 'client_secret_post only' },
            },
          },
        }),
      },
    )
    .get('/.well-known/jwks.json', async ({ set }) => {
      set.headers['cache-control'] = 'public, max-age=300';
      return tokens.jwks();
    }, { detail: { hide: true } })
    .get(
      '/.well-known/oauth-authorization-server',
      () => ({
        issuer: tokens.issuer,
        token_endpoint: `${tokens.issuer}/v1/oauth/token`,
        jwks_uri: `${tokens.issuer}/.well-known/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: SCOPES.filter((s) => s !== '*'),
        // (RFC 8414 requires the member; with no authorization endpoint, no response type is supported)
        response_types_supported: [],
      }),
      { detail: { hide: true } },
    );

  const manage = new Elysia({ name: 'oauth-clients' })
    .use(authed(ctx, 'keys:manage'))
    .post(
      '/v1/admin/oauth-clients',
      async ({ auth, body, set }) => {
        set.status = 201;
        return clients.create(actorOf(auth), await admin.callerOf(auth), body);
      },
      {
        transform: closedBody(CreateClientRequest),
        body: CreateClientRequest,
        response: { 201: ClientWithSecret },
        detail: doc('Create an OAuth client (client credentials); the secret is shown once', 'createOAuthClient', ['cross_environment_forbidden', 'too_many_active_keys'], 'At most 20 OAuth clients per environment (each has its own per-minute budget, as a key has).', {
          platform: { summary: 'A scoring client for a platform\u2019s backend', value: { name: 'platform backend', scopes: ['score', 'esg'] } },
        }),
      },
    )
    .get('/v1/admin/oauth-clients', ({ auth }) => clients.list(actorOf(auth)), {
      response: { 200: t.Object({ clients: t.Array(ClientView) }) },
      detail: doc('The OAuth clients (never a secret): a sandbox key lists sandbox clients only, a live key both environments\u2019', 'listOAuthClients'),
    })
    .post('/v1/admin/oauth-clients/:id/rotate-secret', async ({ auth, params, body }) => clients.rotateSecret(actorOf(auth), await admin.callerOf(auth), params.id, body?.grace_hours ?? 24), {
      params: ClientIdParams,
      transform: closedBody(RotateSecretRequest),
      body: RotateSecretRequest,
      response: { 200: ClientWithSecret },
      detail: doc('Rotate a client\u2019s secret (the old one works for grace_hours)', 'rotateOAuthClientSecret', ['resource_not_found', 'cross_environment_forbidden']),
    })
    .delete('/v1/admin/oauth-clients/:id', async ({ auth, params }) => clients.remove(actorOf(auth), await admin.callerOf(auth), params.id), {
      params: ClientIdParams,
      response: { 200: t.Object({ deleted: t.Literal(true), client_id: t.String(), deleted_at: t.String({ format: 'date-time' }) }) },
      detail: doc('Delete a client: its tokens are refused from the next request on, on every process', 'deleteOAuthClient', ['resource_not_found', 'cross_environment_forbidden']),
    });

  return new Elysia({ name: 'oauth' }).use(endpoint).use(manage);
}
