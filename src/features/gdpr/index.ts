import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { requestState } from '../../plugins/request-state';
import { apiDoc, routeDocs } from '../../lib/api-doc';
import { ApiError, JSON_UTF8 } from '../../lib/errors';
import { actorOf } from '../admin/service';
import {
  ERASE_CONFIRMATION, EraseRequest, EraseResponse, ExportBundle, ExportRequest, SubjectBundle, SubjectRequestBody, SubjectRequestCloseBody,
  SubjectRequestCloseParams, SubjectRequestList, SubjectRequestParams, SubjectRequestQuery, SubjectRequestView,
} from './model';
import { SubjectRequests } from './subject-requests';
import { assertMayErase, createGdprService, exportStream, purgeExpiredRetention } from './service';

export { purgeExpiredRetention };

export function gdprService(ctx: AppContext) {
  return createGdprService(ctx.database, ctx.tenants, () => ctx.clock.now());
}

/**
 * The periodic retention purge as a sweep (`ctx.sweeps.set('gdpr.retention-purge', gdprRetentionSweep(ctx))`):
 * once a day, deletes rows whose retain_until has passed (docs/gdpr.md §5).
 */
export function gdprRetentionSweep(ctx: AppContext, everyMs = 24 * 3600_000) {
  return {
    everyMs,
    run: async () => {
      const counts = await purgeExpiredRetention(ctx.database, ctx.clock.now());
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      if (total) ctx.log.info('gdpr retention purge', counts);
      return counts;
    },
  };
}

/** POST /v1/admin/gdpr/export and /erase (scope gdpr:manage). Format and rules: docs/gdpr.md. */
export function gdprRoutes(ctx: AppContext) {
  const service = gdprService(ctx);

  return new Elysia({ name: 'gdpr' })
    .use(authed(ctx, 'gdpr:manage'))
    .post(
      '/v1/admin/gdpr/export',
      async ({ auth, set, request }) => {
        // Read-only and safe to repeat: a streamed body is never stored for Idempotency-Key
        // replays (the guard skips Response objects), so release the claim instead of leaving it
        // "running" (the 5xx path of complete() deletes it) — a retry then simply exports again.
        const state = requestState(request);
        if (state.idempotencyClaim) {
          await ctx.idempotency.complete(state.idempotencyClaim, 503, '');
          state.idempotencyClaim = undefined;
        }
        // buffered usage records belong in the export too
        await ctx.usage.flush();
        const prepared = await service.prepareExport(auth.tenantId, auth.env, actorOf(auth));
        return new Response(exportStream(prepared), {
          status: 200,
          headers: {
            ...(set.headers as Record<string, string>),
            'content-type': JSON_UTF8,
            'content-disposition': `attachment; filename="${prepared.filename}"`,
            'cache-control': 'no-store',
          },
        });
      },
      {
        body: ExportRequest,
        response: { 200: ExportBundle },
        detail: apiDoc({
          summary: "Export every record of the tenant in the calling key's environment as one streamed JSON bundle",
          description:
            "GDPR access/portability, per environment: a sandbox (sk_test_) key exports the sandbox's records, a live key the live ones (manifest.environments says which); the tenant record is in both. The body is a JSON document streamed page by page: manifest (format_version, generated_at, environments, counts per category, omitted fields), tenant, one array per category, end_of_export. API key hashes, OAuth tokens/state/PKCE verifiers and webhook signing secrets are never included. Writes the audit record gdpr.exported. See docs/gdpr.md.",
          tag: 'admin',
          security: 'bearerAuth',
          operationId: 'gdprExport',
        }),
      },
    )
    .post(
      '/v1/admin/gdpr/erase',
      async ({ auth, body }) => {
        assertMayErase(actorOf(auth));
        if (body?.confirmation !== ERASE_CONFIRMATION) throw confirmationRequired();
        await ctx.usage.flush();
        return service.erase(actorOf(auth));
      },
      {
        // runs after the auth guard and before Elysia's body validation: a sandbox key is 403
        // live_key_required whatever it sends; then every wrong, missing or mistyped confirmation
        // (and a missing body) is 422 confirmation_required
        transform(hook: { body: unknown }) {
          const { body } = hook;
          const auth = (hook as { auth?: { keyId: string; env: string } }).auth;
          if (auth) assertMayErase(auth);
          const c = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).confirmation : undefined;
          if (c !== ERASE_CONFIRMATION) throw confirmationRequired();
        },
        body: EraseRequest,
        response: { 200: EraseResponse },
        detail: apiDoc({
          summary: 'Erase the tenant (both environments; live key only): revoke all keys, anonymise personal data, keep AML records for 7 years, terminate',
          description:
            'Irreversible, and it covers both environments, so it needs a live (sk_live_) key: a sandbox key gets 403 live_key_required and nothing changes (the operator can also erase with the CLI: tenant erase --tenant ID --confirm). In one transaction: every API key is revoked, personal data is anonymised, rows the anti-money-laundering law requires (Lei n.º 83/2017, art. 51.º) are kept with retain_until = now + 7 years, everything else is deleted, and the tenant becomes terminated (its keys then get 401). See docs/gdpr.md for the full list.',
          tag: 'admin',
          security: 'bearerAuth',
          operationId: 'gdprErase',
          errors: ['live_key_required', 'confirmation_required'],
        }),
      },
    );
}

/** Data-subject requests (scope gdpr:manage): POST /v1/gdpr/request and its follow-up. docs/gdpr.md §6. */
export function subjectRequestRoutes(ctx: AppContext, service = new SubjectRequests(ctx)) {
  const doc = routeDocs('admin');
  return new Elysia({ name: 'gdpr-subject-requests' })
    .use(authed(ctx, 'gdpr:manage'))
    .post(
      '/v1/gdpr/request',
      async ({ auth, body, set }) => {
        const r = await service.create(auth, body);
        set.status = 202;
        set.headers.location = `/v1/gdpr/requests/${r.request_id}`;
        return r;
      },
      {
        body: SubjectRequestBody,
        response: { 202: SubjectRequestView },
        detail: doc(
          'A data subject’s request (access, erasure, rectification, restriction) over the tenant’s data in this environment',
          'createSubjectRequest',
          ['invalid_nif'],
          'A natural person exercises a GDPR right through the tenant. Answered 202 received, with due_at one month after requested_at (art. 12(3)); a job searches the tenant’s data for the person (NIF, name, e-mail: invoices, bank transactions, AML screenings, KYC verifications, scores and decisions of a sole trader’s NIF, assignments, insurance) and carries it out: access builds a bundle (GET …/bundle), erasure redacts what no law requires to keep and lists what is kept and why (AML records 7 years, tax records), rectification corrects the name or e-mail where it is not evidence; a restriction is recorded and completed by the tenant. Event gdpr.request.completed. docs/gdpr.md §6.',
          {
            access: { summary: 'Access by NIF and name', value: { type: 'access', subject: { nif: '212345672', name: 'Ana Rita Costa' }, requested_at: '2026-11-20T09:30:00Z' } },
            erasure: { summary: 'Erasure by name and birth date', value: { type: 'erasure', subject: { name: 'Ana Rita Costa', birth_date: '1975-04-12' } } },
            rectification: { summary: 'Rectify a misspelt name', value: { type: 'rectification', subject: { name: 'Ana Rita Cost' }, corrections: { name: 'Ana Rita Costa' } } },
          },
          { created: 'The request, to follow its status' },
        ),
      },
    )
    .get('/v1/gdpr/requests', ({ auth, query }) => service.list(auth, query), {
      query: SubjectRequestQuery,
      response: { 200: SubjectRequestList },
      detail: doc('Data-subject requests, newest first', 'listSubjectRequests'),
    })
    .get('/v1/gdpr/requests/:id', ({ auth, params }) => service.get(auth, params.id), {
      params: SubjectRequestParams,
      response: { 200: SubjectRequestView },
      detail: doc('One data-subject request: status, deadline, what was found, done and kept', 'getSubjectRequest', ['resource_not_found']),
    })
    .get('/v1/gdpr/requests/:id/bundle', ({ auth, params }) => service.bundle(auth, params.id), {
      params: SubjectRequestParams,
      response: { 200: SubjectBundle },
      detail: doc('The person’s data found for a completed access request', 'getSubjectRequestBundle', ['resource_not_found', 'invalid_transition']),
    })
    .post('/v1/gdpr/requests/:id/:action', ({ auth, params, body }) => service.close(auth, params.id, params.action, body?.reason), {
      params: SubjectRequestCloseParams,
      body: SubjectRequestCloseBody,
      response: { 200: SubjectRequestView },
      detail: doc(
        'complete an open restriction request (once the tenant has restricted the processing), or reject an open request (with the reason the person is given)',
        'closeSubjectRequest',
        ['resource_not_found', 'invalid_transition'],
      ),
    });
}

const confirmationRequired = () =>
  new ApiError('confirmation_required', `Erasure is irreversible: send {"confirmation": "${ERASE_CONFIRMATION}"} to confirm.`, {
    fields: [{ path: 'confirmation', message: `must be exactly ${ERASE_CONFIRMATION}` }],
  });
