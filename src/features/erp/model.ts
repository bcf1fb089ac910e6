import { t } from 'elysia';
import { DateTime, HTTP_URL, NullableDateTime, Page, PageQuery, Uuid, Int, RequestDateTime, VISIBLE_TEXT } from '../../lib/schemas';

/** §2.5 provider enum; `demo` is accepted too and is sandbox-only (422 provider_not_available with live keys). */
export const ERP_PROVIDERS = ['toconline', 'primavera', 'phc', 'sage', 'moloni', 'invoicexpress'] as const;
export const ALL_PROVIDERS = [...ERP_PROVIDERS, 'demo'] as const;
export type ErpProvider = (typeof ERP_PROVIDERS)[number];
/** Where a tenant's books come from: a provider's synced data, or an imported SAF-T file (`saft`). */
export const BooksProvider = t.Union([...ALL_PROVIDERS, 'saft'].map((p) => t.Literal(p)), { description: 'An ERP provider whose synced data this tenant holds, or saft for an imported SAF-T file' });
export type AnyProvider = (typeof ALL_PROVIDERS)[number];

export const Provider = t.Union(
  ALL_PROVIDERS.map((p) => t.Literal(p)),
  { description: 'toconline, primavera, phc, sage, moloni, invoicexpress; demo (sandbox only)' },
);

export const ErpCustomerReference = t.String({ minLength: 1, maxLength: 128, pattern: VISIBLE_TEXT, description: 'Your reference for the customer whose ERP is connected (1–128 characters, at least one visible, no control characters)' });

export const ErpOAuthInitiateRequest = t.Object({
  provider: Provider,
  customer_reference: ErpCustomerReference,
  return_url: t.String({
    format: 'uri',
    pattern: HTTP_URL,
    maxLength: 2048,
    description: 'http(s) address the customer is sent back to, with status=connected|denied|error, provider and customer_reference appended',
  }),
  company_nif: t.Optional(
    t.String({ pattern: '^[0-9]{9}$', description: "The connected company's own NIF: its books then feed credit decisions on it (revenue trend, customer concentration, DSO)" }),
  ),
});

export const ErpOAuthInitiateResponse = t.Object({
  authorize_url: t.String({ format: 'uri', description: "The provider's consent page (sandbox: this service's consent page). Send the customer there." }),
  state: t.String({ description: 'Single-use, expires at expires_at (10 minutes)' }),
  expires_at: DateTime,
});

export const ErpSyncRequest = t.Object({
  provider: Provider,
  customer_reference: ErpCustomerReference,
  since: t.Optional(RequestDateTime({ description: 'incremental only: pull documents whose source updated_at is at or after this instant' })),
  mode: t.Optional(
    t.Union([t.Literal('incremental'), t.Literal('full')], {
      default: 'incremental',
      description: 'incremental (default) continues from `since` or from the cursor of the last succeeded run; full pulls everything again (upserts, never duplicates)',
    }),
  ),
});

export const ErpSyncResponse = t.Object({
  run_id: Uuid,
  status: t.Union([t.Literal('queued'), t.Literal('running')], { description: 'running when an identical sync was already in progress and this request joined it' }),
  estimated_duration_seconds: t.Union([Int({ minimum: 0 }), t.Null()], {
    description: "median duration of this tenant's earlier succeeded runs for the provider; null without history",
  }),
  webhook_will_fire: t.Boolean({ description: "true when the run's outcome reaches an active webhook endpoint of this environment whatever it is: erp.sync.completed and erp.sync.failed are both subscribed (or '*'). A disabled or failed endpoint holds events until re-enabled: not counted" }),
});

export const RunStatus = t.Union([t.Literal('queued'), t.Literal('running'), t.Literal('succeeded'), t.Literal('failed')]);

export const SyncRun = t.Object({
  run_id: Uuid,
  provider: t.String(),
  customer_reference: t.String(),
  mode: t.Union([t.Literal('incremental'), t.Literal('full')]),
  since: NullableDateTime,
  status: RunStatus,
  attempts: Int({ minimum: 0, description: 'times a worker claimed the run (a stalled run is retried up to 3 times)' }),
  invoices_count: Int({ minimum: 0 }),
  transactions_count: Int({ minimum: 0 }),
  error_code: t.Union([t.String(), t.Null()], { description: 'relink_required, erp_not_connected, upstream_unavailable, upstream_rejected, oauth_credentials_not_configured, stalled, tenant_terminated, internal_error' }),
  error_message: t.Union([t.String(), t.Null()]),
  created_at: DateTime,
  started_at: NullableDateTime,
  finished_at: NullableDateTime,
});

export const SyncRunList = Page(SyncRun);
export const SyncRunListQuery = t.Object({
  ...PageQuery,
  provider: t.Optional(Provider),
  customer_reference: t.Optional(t.String({ minLength: 1, maxLength: 128 })),
});

export const ConnectionStatus = t.Union(
  [t.Literal('pending'), t.Literal('active'), t.Literal('relink_required'), t.Literal('denied'), t.Literal('error'), t.Literal('disconnected')],
  { description: 'pending → active | denied | error; active → relink_required (refresh failed) | disconnected (DELETE or superseded by a newer link)' },
);

export const Connection = t.Object({
  id: Uuid,
  provider: t.String(),
  customer_reference: t.String(),
  status: ConnectionStatus,
  created_at: DateTime,
  connected_at: NullableDateTime,
  company_nif: t.Union([t.String(), t.Null()], { description: "The connected company's NIF, when given at initiate" }),
  token_expires_at: t.Optional(NullableDateTime),
  status_reason: t.Union([t.String(), t.Null()], {
    description: 'Why the connection is in its status, when it ended or needs relinking: the provider\'s refusal, a denied consent, a failed code exchange, a refused refresh, a DELETE, a newer link (null while pending or active)',
  }),
});
export const ConnectionList = Page(Connection);
export const ConnectionListQuery = t.Object({
  ...PageQuery,
  provider: t.Optional(Provider),
  customer_reference: t.Optional(t.String({ minLength: 1, maxLength: 128 })),
});

export const SyncedDataQuery = t.Object({
  ...PageQuery,
  customer_reference: t.Optional(t.String({ minLength: 1, maxLength: 128 })),
  since: t.Optional(RequestDateTime({ description: 'only rows whose source updated_at is at or after this instant' })),
  synced_since: t.Optional(
    RequestDateTime({
      description:
        'only rows this service stored (new or changed) at or after this instant, oldest change first: the change feed. Read every page, keep the greatest synced_at seen, and next time give it less a minute (a sync committing as you read may stamp a row a little earlier): a row a later sync brings with an older updated_at (a late document) is found, which since would miss. Rows may come again: compare by id.',
    }),
  ),
});
export const ProviderParams = t.Object({ provider: Provider });
/** the providers whose data the ERP store can hold: the connectors, and `saft` (imported files, POST /v1/saft/parse?import=true) */
export const DataProviderParams = t.Object({
  provider: t.Union([...ALL_PROVIDERS, 'saft' as const].map((p) => t.Literal(p)), { description: 'a connector, or saft for imported SAF-T files' }),
});

export const Invoice = t.Object({
  id: Uuid,
  provider: t.String(),
  customer_reference: t.String(),
  provider_document_id: t.String(),
  document_type: t.String({ description: 'FT, FS, FR, NC or ND (SAF-T PT InvoiceType)' }),
  number: t.String({ examples: ['FT 2026/123'] }),
  atcud: t.Union([t.String(), t.Null()]),
  issue_date: t.String({ format: 'date' }),
  due_date: t.Union([t.String({ format: 'date' }), t.Null()]),
  customer_nif: t.Union([t.String(), t.Null()]),
  customer_name: t.Union([t.String(), t.Null()]),
  currency: t.String(),
  net_total_cents: Int(),
  tax_total_cents: Int(),
  gross_total_cents: Int(),
  vat_breakdown: t.Array(t.Object({ rate: t.Number(), base_cents: Int(), tax_cents: Int() })),
  status: t.String({ description: 'N normal, A annulled' }),
  references: t.Array(t.String()),
  updated_at: DateTime,
  synced_at: DateTime,
});
export const InvoiceList = Page(Invoice);

export const Transaction = t.Object({
  id: Uuid,
  provider: t.String(),
  customer_reference: t.String(),
  provider_transaction_id: t.String(),
  booking_date: t.String({ format: 'date' }),
  amount_cents: Int({ description: 'positive = money in, negative = money out' }),
  currency: t.String(),
  description: t.Union([t.String(), t.Null()]),
  counterparty_name: t.Union([t.String(), t.Null()]),
  counterparty_iban: t.Union([t.String(), t.Null()]),
  matched_invoice_number: t.Union([t.String(), t.Null()]),
  updated_at: DateTime,
  synced_at: DateTime,
});
export const TransactionList = Page(Transaction);

export type SyncRunBody = typeof SyncRun.static;
export type ConnectionBody = typeof Connection.static;
export type InvoiceBody = typeof Invoice.static;
export type TransactionBody = typeof Transaction.static;
