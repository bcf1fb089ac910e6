import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed, replayedJson } from '../../plugins/auth';
import { requestState } from '../../plugins/request-state';
import { apiDoc, routeDocs } from '../../lib/api-doc';
import type { AuditTrail } from '../audit/service';
import type { FactoringService } from '../factoring/service';
import { notModified, refuseUnacceptable, wantsPdf } from '../../lib/accept';
import { NoticeIdParams, NoticeRequest, NoticeResponse } from './model';
import { NoticeService } from './service';
import { bodyProblems, noticeProblems } from './checks';
import { isJsonObject } from '../../lib/errors';
import { printsWhole } from '../../lib/pdf-fonts';

const PDF = 'application/pdf';


/** the notice's PDF, with the headers the CSRD report's PDF carries: its language, ETag and Repr-Digest (RFC 9530: the SHA-256, base64) */
const pdfResponse = (notice: { bytes: Uint8Array; sha256: string; language: string }, id: string, status: number, headers: Record<string, unknown>) =>
  new Response(notice.bytes, {
    status,
    headers: {
      ...(headers as Record<string, string>),
      'content-type': 'application/pdf',
      'content-disposition': `attachment; filename="${id}.pdf"`,
      'content-language': notice.language,
      etag: `"${notice.sha256}"`,
      'repr-digest': `sha-256=:${Buffer.from(notice.sha256, 'hex').toString('base64')}:`,
      'x-notice-id': id,
    },
  });

/** POST /v1/notice/cession and the stored notices (scope `finance`). */
export function noticeRoutes(ctx: AppContext, deps: { factoring: FactoringService; audit: AuditTrail }) {
  const service = new NoticeService(ctx, deps.factoring, deps.audit);
  const doc = routeDocs('finance');
  return new Elysia({ name: 'notice' })
    .use(authed(ctx, 'finance'))
    // An Idempotency-Key replay (answered by the guard with the stored JSON) honours the replay's
    // own Accept, as the CSRD report's does: a caller asking for the PDF gets the stored PDF
    .onAfterHandle(async ({ request, response, auth }) => {
      if (!wantsPdf(request.headers.get('accept') ?? undefined)) return;
      const replay = await replayedJson<{ notice_id?: string }>(response, 201);
      if (!replay?.stored.notice_id) return;
      return pdfResponse(await service.pdf(auth, replay.stored.notice_id), replay.stored.notice_id, 201, replay.headers);
    })
    .post(
      '/v1/notice/cession',
      async ({ auth, body, headers, request, set }) => {
        const { view, pdf } = await service.create(auth, body);
        ctx.usage.record({ tenantId: auth.tenantId, apiKeyId: auth.keyId, env: auth.env, requestId: auth.requestId, meter: 'cession_notice' });
        set.status = 201;
        set.headers.location = `/v1/notice/cession/${view.notice_id}`;
        set.headers.vary = 'Accept'; // JSON or the PDF by Accept
        if (!wantsPdf(headers.accept)) return view;
        // the PDF itself: an Idempotency-Key stores the JSON answer (a replay answers by its own Accept)
        const state = requestState(request);
        if (state.idempotencyClaim) {
          await ctx.idempotency.complete(state.idempotencyClaim, 201, JSON.stringify(view), set.headers);
          state.idempotencyClaim = undefined;
        }
        return pdfResponse({ bytes: pdf, sha256: view.sha256, language: view.language }, view.notice_id, 201, set.headers);
      },
      {
        // every problem at once: the schema's and those the request decides alone (a NIF's check
        // digit or holder type, the IBAN, parties not distinct, the invoices' dates…) in one 422,
        // judged here, after the auth guard and before Elysia's validation (which would answer the
        // schema's alone); a body that is not an object is left to it (named as on every route)
        async transform({ body, request }) {
          // an Accept this route cannot answer is 406, before the Idempotency-Key is looked up or claimed
          refuseUnacceptable(request.headers.get('accept'), [PDF]);
          if (!isJsonObject(body)) return;
          const fields = bodyProblems(body, ctx.clock.now().toISOString().slice(0, 10), await printsWhole());
          if (fields.length) throw noticeProblems(fields, (body.payment as { iban?: unknown } | undefined)?.iban);
        },
        body: NoticeRequest,
        response: { 201: NoticeResponse },
        detail: doc(
          'Notice of assignment to a debtor (notificação de cessão de créditos), as PDF or JSON with its SHA-256 and download URL',
          'createCessionNotice',
          ['invalid_iban', 'invalid_nif', 'resource_not_found', 'invalid_transition', 'not_acceptable'],
          'For a factoring operation (operation_id, and debtor_nif when it has several debtors) or for parties and invoices given in full: the notice that the credits were assigned, the new payment instruction (the IBAN checked), the legal basis (Civil Code arts. 583.º–585.º) and a block for the debtor\u2019s acknowledgement; pt-PT by default, en on request. Accept: application/pdf answers the PDF itself (an Idempotency-Key replay answers by its own Accept: the stored PDF or the JSON); otherwise JSON. Stored with its SHA-256; in the operation\u2019s audit trail. docs/notice.md.',
          {
            from_operation: { summary: 'From an operation with one debtor', value: { operation_id: 'fop_01936c1e-8a2f-7b3c-9d4e-5f60718293a4', parties: { factor: { name: 'Factor Exemplo, S.A.', nif: '599000015', address: 'Av. da Liberdade 1, 1250-096 Lisboa' } }, payment: { iban: 'PT50 0002 0123 1234 5678 9015 4' }, place: 'Lisboa' } },
            given: {
              summary: 'Parties and invoices given in full, in English',
              value: {
                parties: { assignor: { name: 'Metalomecânica Exemplo, Lda', nif: '599000031' }, factor: { name: 'Factor Exemplo, S.A.', nif: '599000015' }, debtor: { name: 'Distribuidora Alfa, S.A.', nif: '599000023', address: 'Rua do Comércio 10, 4000-000 Porto' } },
                invoices: [{ number: 'FT 2026/118', atcud: 'JJ4FGTXK-118', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1845000 }],
                payment: { iban: 'PT50000201231234567890154', bic: 'CGDIPTPL' },
                contract_reference: 'CF-2026-0042',
                language: 'en',
              },
            },
          },
          { created: 'The stored notice (…/pdf for the PDF)', alsoAnswers: { 'application/pdf': 'The notice as a PDF (Accept: application/pdf), with ETag (its SHA-256), Repr-Digest, Content-Language, X-Notice-Id and Location' } },
        ),
      },
    )
    .get('/v1/notice/cession/:id', ({ auth, params }) => service.get(auth, params.id), {
      params: NoticeIdParams,
      response: { 200: NoticeResponse },
      detail: doc('A stored notice: its SHA-256 and download URL', 'getCessionNotice', ['resource_not_found']),
    })
    .get(
      '/v1/notice/cession/:id/pdf',
      async ({ auth, params, set, request }) => {
        const notice = await service.pdf(auth, params.id);
        return notModified(request, `"${notice.sha256}"`, set.headers) ?? pdfResponse(notice, params.id, 200, set.headers);
      },
      {
        params: NoticeIdParams,
        detail: apiDoc({
          summary: 'The notice\u2019s PDF, byte for byte as generated (its SHA-256 in ETag)',
          tag: 'finance',
          security: 'BearerAuth',
          operationId: 'getCessionNoticePdf',
          errors: ['resource_not_found'],
          alsoAnswers: { 'application/pdf': 'The stored PDF, with ETag (its SHA-256)' },
          responses: { 200: { description: 'The stored PDF' }, 304: { description: 'Not modified: If-None-Match named its ETag (no body)' } },
        }),
      },
    );
}
