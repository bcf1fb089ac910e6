import { Elysia, t } from 'elysia';
import { Value } from '@sinclair/typebox/value';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { ApiError, validationError } from '../../lib/errors';
import { binaryBodies, type BinaryBody } from '../../plugins/http-errors';
import { assertDecodable, assertFileType } from './extract';
import { decodePool } from './decode-pool';
import { decodeQr, NotAtQr } from './qr';

const QrBody = t.Object({ qr: t.String({ minLength: 1, maxLength: 1000, description: 'The QR payload as text: A:…*B:…*…' }) });

const Space = t.Object({
  region: t.String(),
  exempt_base: t.Union([t.Number(), t.Null()]),
  reduced_base: t.Union([t.Number(), t.Null()]),
  reduced_vat: t.Union([t.Number(), t.Null()]),
  intermediate_base: t.Union([t.Number(), t.Null()]),
  intermediate_vat: t.Union([t.Number(), t.Null()]),
  normal_base: t.Union([t.Number(), t.Null()]),
  normal_vat: t.Union([t.Number(), t.Null()]),
});
const Nullable = <T extends ReturnType<typeof t.String> | ReturnType<typeof t.Number>>(s: T) => t.Union([s, t.Null()]);
export const ExtractResponse = t.Object({
  fields: t.Object({
    issuer_nif: Nullable(t.String()), buyer_nif: Nullable(t.String()), buyer_country: Nullable(t.String()), document_type: Nullable(t.String()),
    document_status: Nullable(t.String()), document_date: Nullable(t.String()), document_id: Nullable(t.String()), atcud: Nullable(t.String()),
    fiscal_spaces: t.Array(Space), non_taxable: Nullable(t.Number()), stamp_duty: Nullable(t.Number()), total_taxes: Nullable(t.Number()),
    gross_total: Nullable(t.Number()), withholding: Nullable(t.Number()), hash_characters: Nullable(t.String()), certificate_number: Nullable(t.String()), other_info: Nullable(t.String()),
  }),
  raw: t.Record(t.String(), t.String(), { description: 'Every CODE:value pair as read' }),
  checks: t.Array(t.Object({ code: t.String(), severity: t.Union([t.Literal('error'), t.Literal('warning')]), message: t.String(), field: Nullable(t.String()) })),
  valid: t.Boolean({ description: 'no check of severity error' }),
  source: t.Union([t.Literal('text'), t.Literal('image'), t.Literal('pdf')]),
  page: Nullable(t.Number()),
  qr: t.String({ description: 'The payload read' }),
});

/** POST /v1/invoice/extract (scope `erp`): the AT QR code from text, an image or a PDF. */
export function invoiceRoutes(ctx: AppContext) {
  const binary = binaryBodies(ctx.config)['/v1/invoice/extract']!;
  // images and PDFs are read by worker threads (decode-pool.ts), ended with the context
  const readers = decodePool(ctx);
  return new Elysia({ name: 'invoice' })
    .use(authed(ctx, 'erp'))
    .post(
      '/v1/invoice/extract',
      async ({ auth, body, headers }) => {
        let payload: string;
        let source: 'text' | 'image' | 'pdf' = 'text';
        let page: number | null = null;
        if (body && typeof body === 'object' && 'binary' in body) {
          const b = body as BinaryBody;
          if (!b.binary.byteLength) throw new ApiError('image_unreadable', 'The body is empty.');
          assertFileType(b.binary, b.contentType);
          source = b.contentType === 'application/pdf' ? 'pdf' : 'image';
          assertDecodable(b.binary, source);
          ({ payload, page } = await readers.read(b.binary, source));
        } else {
          // an empty file is read as no body at all (HTTP gives none for Content-Length: 0)
          if (binary.types.test(headers['content-type'] ?? '')) throw new ApiError('image_unreadable', 'The body is empty.');
          if (!Value.Check(QrBody, body)) throw validationError([{ path: 'qr', message: 'must be the QR payload as text (1 to 1000 characters)' }]);
          payload = body.qr;
        }
        let decoded;
        try {
          decoded = decodeQr(payload, ctx.clock.now());
        } catch (err) {
          if (err instanceof NotAtQr) throw new ApiError('not_at_qr', err.message, source === 'text' ? { fields: [{ path: 'qr', message: err.message }] } : {});
          throw err;
        }
        ctx.usage.record({ tenantId: auth.tenantId, apiKeyId: auth.keyId, env: auth.env, requestId: auth.requestId, meter: 'invoice_extract' });
        return { ...decoded, valid: !decoded.checks.some((c) => c.severity === 'error'), source, page, qr: payload };
      },
      {
        response: { 200: ExtractResponse },
        detail: apiDoc({
          summary: 'Read and check the AT QR code of an invoice (text, PNG/JPEG image or PDF)',
          description:
            'The QR payload as JSON {qr}, or the image (image/png, image/jpeg) or PDF (application/pdf) itself as the body. Fields A…S decoded and named, then checked: NIF check digits, ATCUD format and sequence, date, VAT against the rates of each fiscal space, total taxes and gross total, field order and lengths. Images up to 25 million pixels (100 MB decoded); PDFs: the first 5 pages, within 25 million pixels together. docs/invoice-qr.md.',
          tag: 'erp',
          security: 'BearerAuth',
          operationId: 'invoiceExtract',
          errors: ['image_unreadable', 'qr_not_found', 'not_at_qr', 'service_busy'],
          binaryBody: { json: JSON.parse(JSON.stringify(QrBody)), types: ['image/png', 'image/jpeg', 'application/pdf'], maxBytes: binary.limit },
          examples: {
            at_example: { summary: 'The AT specification example', value: { qr: 'A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80' } },
          },
        }),
      },
    );
}
