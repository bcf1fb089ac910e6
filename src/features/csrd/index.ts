import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed, replayedJson } from '../../plugins/auth';
import { langOf, requestState } from '../../plugins/request-state';
import { apiDoc } from '../../lib/api-doc';
import { fieldProblems } from '../../lib/errors';
import { CsrdReport, CsrdReportRequest, ReportIdParams, validateReportBody, type CsrdReportBody, type CsrdReportInput } from './model';
import type { ReportLanguage } from './mapping';
import { CsrdService } from './service';

import { notModified, refuseUnacceptable, wantsPdf } from '../../lib/accept';

export const PDF = 'application/pdf';

/** The report language: the body's, else Accept-Language when it names pt or en, else pt-PT. */
function reportLanguage(body: CsrdReportInput, headers: Record<string, string | undefined>): ReportLanguage {
  if (body.language) return body.language;
  const header = headers['accept-language'];
  if (header && /(^|,)\s*(pt|en)(-[a-z0-9]+)*\s*(;|,|$)/i.test(header)) return langOf(headers) === 'pt' ? 'pt-PT' : 'en';
  return 'pt-PT';
}

const pdfHeaders = (report: CsrdReportBody, base: Record<string, unknown>) => ({
  ...(base as Record<string, string>),
  'content-type': PDF,
  'content-disposition': `inline; filename="${report.report_id}.pdf"`,
  'content-language': report.language,
  vary: 'Accept, Accept-Language',
  'x-report-id': report.report_id,
  etag: `"${report.sha256}"`,
  // RFC 9530: the SHA-256 of the bytes, as in the JSON's sha256 (hex there, base64 here)
  'repr-digest': `sha-256=:${Buffer.from(report.sha256, 'hex').toString('base64')}:`,
});

const pdfResponse = (report: CsrdReportBody, pdf: Uint8Array, status: number, headers: Record<string, unknown>) =>
  new Response(pdf, { status, headers: pdfHeaders(report, headers) });

const EXAMPLES = {
  by_nif: {
    summary: 'The latest assessment of a NIF, in Portuguese, for 2026, with cover details',
    value: {
      nif: '505201348',
      language: 'pt-PT',
      reporting_period: { start: '2026-01-01', end: '2026-12-31' },
      company: { name: 'Metalúrgica Exemplo, Lda.', address: 'Rua da Indústria 12, 3800-055 Aveiro', legal_form: 'Sociedade por quotas', country: 'PT', turnover_eur: 2130000, employees: 60 },
    },
  },
  by_assessment: { summary: 'One assessment by its id, in English (other fields default)', value: { assessment_id: '6f1c2a9e-4b7d-4c1e-9a53-0d2b8e7f1a24', language: 'en' } },
};

/** POST /v1/csrd/report and the stored reports (scope `esg`). docs/csrd.md. */
export function csrdRoutes(ctx: AppContext) {
  const service = new CsrdService(ctx.database, ctx.usage, () => ctx.clock.now());
  return (
    new Elysia({ name: 'csrd' })
      .use(authed(ctx, 'esg'))
      // An Idempotency-Key replay (answered by the guard with the stored JSON) honours the replay's
      // own Accept: a caller asking for the PDF gets the stored PDF of the same report.
      .onAfterHandle(async ({ request, response, auth }) => {
        if (!wantsPdf(request.headers.get('accept'))) return;
        const replay = await replayedJson<{ report_id?: string }>(response, 201);
        if (!replay?.stored.report_id) return;
        const { report, pdf } = await service.get(auth, replay.stored.report_id, true);
        return pdfResponse(report, pdf!, 201, { ...replay.headers, location: `/v1/csrd/reports/${report.report_id}` });
      })
      .post(
        '/v1/csrd/report',
        async ({ auth, body, headers, set, request }) => {
          const input = body as CsrdReportInput;
          const language = reportLanguage(input, headers);
          const { report, pdf } = await service.create(auth, input, language);
          set.status = 201;
          set.headers.location = `/v1/csrd/reports/${report.report_id}`;
          set.headers['content-language'] = language;
          set.headers.vary = 'Accept, Accept-Language';
          if (!wantsPdf(headers.accept)) return report;
          // the PDF is not what an Idempotency-Key replay stores: store the JSON report (the
          // replay then answers in the format its own Accept asks for, see onAfterHandle)
          const state = requestState(request);
          if (state.idempotencyClaim) {
            await ctx.idempotency.complete(state.idempotencyClaim, 201, JSON.stringify(report), set.headers);
            state.idempotencyClaim = undefined;
          }
          return pdfResponse(report, pdf, 201, set.headers);
        },
        {
          transform({ body, request }) {
            // an Accept this route cannot answer is 406, before the Idempotency-Key is looked up or
            // claimed (a replay, too, is answered in the replay's Accept; a 406 is not stored)
            refuseUnacceptable(request.headers.get('accept'), [PDF]);
            // the NIF's check digit is one of the fields (format nif): invalid_nif when it is the only problem
            const fields = validateReportBody(body, ctx.clock.now().toISOString().slice(0, 10));
            if (fields.length) throw fieldProblems(fields);
          },
          body: CsrdReportRequest,
          response: { 201: CsrdReport },
          detail: apiDoc({
            summary: 'VSME sustainability report (CSRD) from an ESG assessment: JSON or PDF',
            description:
              'From one of your ESG assessments (assessment_id from POST /v1/esg, or the latest of a NIF): the VSME Basic module disclosures B1–B11 with each datapoint\'s value, unit, VSME reference and status ("not_reported" where the questionnaire has no answer, "not_applicable" where the company declared so), the Comprehensive-module datapoints the questionnaire collects (C3, C5–C9), the pillar scores and tier, the 27 indicators, the linked SDGs (aligned or not, with targets), and the recommendations, in pt-PT (default) or en. `Accept: application/pdf` answers the PDF itself (cover, scores with charts, indicator table, SDGs, disclosures, recommendations); the JSON carries the PDF\'s SHA-256 and pdf_url. The report is stored: GET /v1/csrd/reports/{id} and /pdf. docs/csrd.md.',
            tag: 'esg',
            security: 'BearerAuth',
            operationId: 'createCsrdReport',
            errors: ['resource_not_found', 'invalid_nif', 'not_acceptable'],
            localised: 'The report\'s language when the body has no `language`: en when it names English ahead of Portuguese, pt-PT otherwise (and without the header).',
            examples: EXAMPLES,
            alsoAnswers: { [PDF]: 'The report as a PDF (Accept: application/pdf), with Repr-Digest (its SHA-256) and Location' },
            created: 'The stored report (GET it for the JSON, …/pdf for the PDF)',
          }),
        },
      )
      .get(
        '/v1/csrd/reports/:id',
        async ({ auth, params, headers, set }) => {
          refuseUnacceptable(headers.accept, [PDF]);
          const pdf = wantsPdf(headers.accept);
          const { report, pdf: bytes } = await service.get(auth, params.id, pdf);
          set.headers['content-language'] = report.language;
          set.headers.vary = 'Accept';
          // the PDF bypasses the JSON response schema (Elysia does not check a Response)
          if (pdf) return pdfResponse(report, bytes!, 200, set.headers) as unknown as CsrdReportBody;
          return report;
        },
        {
          params: ReportIdParams,
          response: { 200: CsrdReport },
          detail: apiDoc({
            summary: 'A stored VSME report (JSON, or the PDF with Accept: application/pdf)',
            tag: 'esg',
            security: 'BearerAuth',
            operationId: 'getCsrdReport',
            errors: ['resource_not_found', 'not_acceptable'],
            alsoAnswers: { [PDF]: 'The stored PDF (Accept: application/pdf)' },
          }),
        },
      )
      .get(
        '/v1/csrd/reports/:id/pdf',
        async ({ auth, params, set, request }) => {
          const { report, pdf } = await service.get(auth, params.id, true);
          return notModified(request, `"${report.sha256}"`, set.headers) ?? pdfResponse(report, pdf!, 200, set.headers);
        },
        {
          params: ReportIdParams,
          detail: apiDoc({
            summary: 'The PDF of a stored VSME report, byte for byte as first generated (its SHA-256 is the JSON\'s sha256)',
            tag: 'esg',
            security: 'BearerAuth',
            operationId: 'getCsrdReportPdf',
            errors: ['resource_not_found'],
            alsoAnswers: { [PDF]: 'The stored PDF, with ETag and Repr-Digest (its SHA-256)' },
            responses: { 200: { description: 'The stored PDF' }, 304: { description: 'Not modified: If-None-Match named its ETag (no body)' } },
          }),
        },
      )
  );
}
