import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import { authed, limitAnonymous } from '../../plugins/auth';
import { apiDoc, routeDocs } from '../../lib/api-doc';
import {
  Connection,
  ConnectionList,
  ConnectionListQuery,
  ErpOAuthInitiateRequest,
  ErpOAuthInitiateResponse,
  ErpSyncRequest,
  ErpSyncResponse,
  InvoiceList,
  ProviderParams,
  DataProviderParams,
  SyncedDataQuery,
  SyncRun,
  SyncRunList,
  SyncRunListQuery,
  TransactionList,
} from './model';
import { erpService } from './service';
import { RECOVER_EVERY_MS, RECOVER_SWEEP, SYNC_JOB } from './sync';
import { readCapped } from '../../plugins/http-errors';

/** the consent form's fields (application/x-www-form-urlencoded, at most 4 KiB; anything else reads as no fields) */
async function readConsentForm(request: Request): Promise<Record<string, string>> {
  if (request.bodyUsed || !/^application\/x-www-form-urlencoded\b/i.test(request.headers.get('content-type') ?? '')) return {};
  const text = await readCapped(request, 4096).catch(() => null);
  return text ? Object.fromEntries(new URLSearchParams(text)) : {};
}
import type { ErpCaller } from './util';

export const PURGE_SWEEP = 'erp.oauth.purge';

export { configureErp, erpService } from './service';

type ServerLike = Parameters<typeof limitAnonymous>[2];
const caller = (auth: { tenantId: string; keyId: string; env: 'sandbox' | 'live'; requestId: string }): ErpCaller => ({
  tenantId: auth.tenantId,
  keyId: auth.keyId,
  env: auth.env,
  requestId: auth.requestId,
});

const doc = routeDocs('erp');

/**
 * ERP connector routes. The OAuth consent page and callback take no bearer key (the single-use
 * state authenticates them) and are rate limited per client address; everything else needs a
 * key with the `erp` scope. The service is looked up per request, so configureErp() after the
 * app is built still applies.
 */
export function erpRoutes(ctx: AppContext) {
  const svc = () => erpService(ctx);

  const browser = new Elysia({ name: 'erp-oauth-browser' })
    .get(
      '/v1/erp-connector/oauth/consent',
      async ({ query, request, server, set }) => {
        const over = await limitAnonymous(ctx, request, server as ServerLike, set);
        if (over) throw over;
        return svc().oauth.consent(query.state);
      },
      {
        // optional in the schema so that a link without it gets the 400 page a browser can show, not a JSON 422
        query: t.Object({ state: t.Optional(t.String({ description: 'The state of the consent link (required: without it, the 400 page)' })) }),
        detail: apiDoc({
          summary: 'Sandbox consent page (HTML): a POST form with Approve / Deny',
          description:
            'Only for sandbox connections: it stands in for the provider so the flow runs end to end. Changes nothing: it sets a cookie (pt_consent_<connection id>, HttpOnly, SameSite=Strict) and shows a form posting state, csrf_token and decision to POST /v1/erp-connector/oauth/consent. A missing, unknown, expired or live state gives a 400 HTML page.',
          tag: 'erp',
          security: null,
          operationId: 'erpSandboxConsent',
          errors: ['rate_limited'],
          responses: {
            '200': { description: 'The consent page: a form (method=post) with Approve and Deny buttons.', html: true },
            '400': { description: 'A missing, unknown or expired state: an HTML page saying so.', html: true },
          },
        }),
      },
    )
    .post(
      '/v1/erp-connector/oauth/consent',
      async ({ request, server, set }) => {
        const over = await limitAnonymous(ctx, request, server as ServerLike, set);
        if (over) throw over;
        return svc().oauth.decide(await readConsentForm(request), request.headers.get('cookie'));
      },
      {
        detail: apiDoc({
          summary: 'Sandbox consent decision (the consent page’s form): 303 back to return_url',
          description:
            'The browser posts the consent page’s form. The csrf_token must match the consent page’s cookie of this browser, else 403 HTML page and nothing changes. Approve → connection active, Deny → denied; the state is used up and the browser is sent to return_url with status=connected|denied, provider and customer_reference (303). Errors are HTML pages (this is a browser page), except 429.',
          tag: 'erp',
          security: null,
          operationId: 'erpSandboxConsentDecision',
          errors: ['rate_limited'],
          formBody: {
            type: 'object',
            required: ['state', 'csrf_token', 'decision'],
            properties: {
              state: { type: 'string', description: 'The state of the consent link' },
              csrf_token: { type: 'string', description: 'The hidden token of the consent page' },
              decision: { type: 'string', enum: ['approve', 'deny'] },
            },
          },
          responses: {
            '303': { description: 'To return_url with status=connected|denied, provider and customer_reference.', location: true },
            '400': { description: 'Unknown, expired, used or live state, or no decision: an HTML page; nothing changes.', html: true },
            '403': { description: 'Missing or wrong csrf_token, or no consent cookie (a forged or cross-site post): an HTML page; nothing changes.', html: true },
          },
        }),
      },
    )
    .get(
      '/v1/erp-connector/oauth/callback',
      async ({ query, request, server, set }) => {
        const over = await limitAnonymous(ctx, request, server as ServerLike, set);
        if (over) throw over;
        return svc().oauth.callback(query);
      },
      {
        query: t.Object({ state: t.Optional(t.String()), code: t.Optional(t.String()), error: t.Optional(t.String()), error_description: t.Optional(t.String()) }),
        detail: apiDoc({
          summary: 'OAuth redirect target of live providers: exchanges the code and sends the customer back to return_url',
          description:
            'No API key: the single-use state authenticates the request. Success: 302 to return_url with status=connected|denied|error, provider and customer_reference. Unknown, expired (10 minutes) or reused state: 400 HTML page and nothing is stored. A sandbox state is refused here (400 page, nothing changes): sandbox links are decided by the consent page’s POST form.',
          tag: 'erp',
          security: null,
          operationId: 'erpOAuthCallback',
          errors: ['rate_limited'],
          responses: {
            '302': { description: 'To return_url with status=connected|denied|error, provider and customer_reference.', location: true },
            '400': { description: 'Unknown, expired or reused state, or a sandbox state: an HTML page saying so; nothing is stored.', html: true },
          },
        }),
      },
    );

  const api = new Elysia({ name: 'erp-api' })
    .use(authed(ctx, 'erp'))
    .post('/v1/erp-connector/oauth/initiate', ({ auth, body }) => svc().oauth.initiate(caller(auth), body), {
      body: ErpOAuthInitiateRequest,
      response: { 200: ErpOAuthInitiateResponse },
      detail: doc(
        'Start linking a customer’s ERP: returns the provider’s authorisation URL',
        'erpOAuthInitiate',
        ['provider_not_available', 'oauth_credentials_not_configured', 'invalid_nif'],
        'Creates a pending connection with a single-use state (10 minutes) and, for TOConline, a PKCE verifier. Sandbox keys get this service’s consent page instead of the provider’s, for any provider and for demo.',
      ),
    })
    .get('/v1/erp-connector/connections', ({ auth, query }) => svc().listConnections(caller(auth), query), {
      query: ConnectionListQuery,
      response: { 200: ConnectionList },
      detail: doc('List ERP connections of this environment (never tokens)', 'erpListConnections'),
    })
    .get('/v1/erp-connector/connections/:id', ({ auth, params }) => svc().getConnection(caller(auth), params.id), {
      params: t.Object({ id: t.String({ maxLength: 64 }) }),
      response: { 200: Connection },
      detail: doc('One ERP connection (never its tokens)', 'erpGetConnection', ['resource_not_found']),
    })
    .delete('/v1/erp-connector/connections/:id', ({ auth, params }) => svc().disconnect(caller(auth), params.id), {
      params: t.Object({ id: t.String({ maxLength: 64 }) }),
      response: { 200: Connection },
      detail: doc('Disconnect: status disconnected, tokens wiped (200 with the connection; repeatable)', 'erpDisconnect', ['resource_not_found']),
    })
    .post(
      '/v1/erp-connector/sync',
      async ({ auth, body, set }) => {
        const res = await svc().sync.request(caller(auth), body);
        set.status = 202;
        set.headers.location = `/v1/erp-connector/sync/${res.run_id}`; // where the run is polled
        return res;
      },
      {
        body: ErpSyncRequest,
        response: { 202: ErpSyncResponse },
        detail: doc(
          'Pull invoices and transactions from the connected ERP (asynchronous run)',
          'erpSync',
          ['erp_not_connected', 'provider_not_available', 'oauth_credentials_not_configured'],
          'Creates a sync run (or joins an identical one still queued or running) and returns 202. Poll GET /v1/erp-connector/sync/{run_id}, or subscribe a webhook to erp.sync.completed / erp.sync.failed. Sandbox: deterministic synthetic data (demo, or labelled with the provider), no real OAuth and no real fetch, but a connection approved on the sandbox\'s own consent page (POST /v1/erp-connector/oauth/initiate, then Approve) as live needs its consent: without one, 409 erp_not_connected.',
          undefined,
          { created: 'The sync run, to poll' },
        ),
      },
    )
    .get('/v1/erp-connector/sync', ({ auth, query }) => svc().listRuns(caller(auth), query), {
      query: SyncRunListQuery,
      response: { 200: SyncRunList },
      detail: doc('List sync runs, newest first', 'erpListSyncRuns'),
    })
    .get('/v1/erp-connector/sync/:run_id', ({ auth, params }) => svc().getRun(caller(auth), params.run_id), {
      params: t.Object({ run_id: t.String({ maxLength: 64 }) }),
      response: { 200: SyncRun },
      detail: doc('One sync run: status, counts, error', 'erpGetSyncRun', ['resource_not_found']),
    })
    .get('/v1/erp/:provider/invoices', ({ auth, params, query }) => svc().listInvoices(caller(auth), params.provider, query), {
      params: DataProviderParams,
      query: SyncedDataQuery,
      response: { 200: InvoiceList },
      detail: doc('Synced invoices (amounts in cents), filterable by customer_reference and source updated_at', 'erpListInvoices'),
    })
    .get('/v1/erp/:provider/transactions', ({ auth, params, query }) => svc().listTransactions(caller(auth), params.provider, query), {
      params: DataProviderParams,
      query: SyncedDataQuery,
      response: { 200: TransactionList },
      detail: doc('Synced bank transactions (amounts in cents), filterable by customer_reference and source updated_at', 'erpListTransactions'),
    });

  return new Elysia({ name: 'erp' }).use(browser).use(api);
}

/**
 * Background side, for processes that run workers: the 'erp.sync' job handler and the
 * 'erp.sync.recover' sweep (every 5 s), plus 'erp.oauth.purge' (every 10 min: abandoned pending
 * connections). Call before ctx.jobs.start().
 */
export function registerErpWorkers(ctx: AppContext) {
  ctx.jobs.register<{ runId: string }>(SYNC_JOB, (data) => erpService(ctx).sync.handle(data), { concurrency: 2 });
  ctx.sweeps.set(RECOVER_SWEEP, { everyMs: RECOVER_EVERY_MS, run: () => erpService(ctx).sync.recover() });
  ctx.sweeps.set(PURGE_SWEEP, { everyMs: 10 * 60_000, run: () => erpService(ctx).oauth.purgeAbandoned() });
}
