import { t } from 'elysia';
import { DateTime, Uuid, Int, RequestDate, RequestDateTime, PageLimit } from '../../lib/schemas';

/** The only accepted value of `confirmation` on POST /v1/admin/gdpr/erase (spec §4.2.9). */
export const ERASE_CONFIRMATION = 'ERASE-MY-DATA';

/** The names of the array categories of the export bundle, in the order they are streamed. */
export const EXPORT_ARRAY_CATEGORIES = [
  'api_keys',
  'oauth_clients',
  'usage_records',
  'audit_log',
  'score_results',
  'esg_assessments',
  'erp_connections',
  'sync_runs',
  'invoices',
  'bank_transactions',
  'webhook_endpoints',
  'events',
  'webhook_deliveries',
  'credit_decisions',
  'credit_policies',
  'aml_screenings',
  'kyc_verifications',
  'saft_runs',
  'finance_operations',
  'assigned_invoices',
  'confirming_programmes',
  'confirming_suppliers',
  'confirming_payables',
  'audit_entries',
  'cession_notices',
  'insurance_submissions',
  'gdpr_requests',
  'csrd_reports',
] as const;
export type ExportArrayCategory = (typeof EXPORT_ARRAY_CATEGORIES)[number];

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

/** Body of POST /v1/admin/gdpr/export: optional, an empty JSON object (other keys are ignored). */
export const ExportRequest = t.Optional(t.Object({}, { description: 'Optional; send {} or no body.' }));

const Row = t.Record(t.String(), t.Unknown(), {
  description: 'One database row: snake_case column names, date-times as ISO 8601 strings, JSON columns as stored. Secret columns are left out (see manifest.omitted).',
});
const Rows = (description: string) => t.Array(Row, { description });

export const ExportManifest = t.Object(
  {
    format_version: t.Literal('1'),
    generated_at: DateTime,
    tenant_id: Uuid,
    environments: t.Array(t.Union([t.Literal('sandbox'), t.Literal('live')]), { description: "The environment exported: the calling key's (sandbox or live). Rows of the other environment are not in the bundle." }),
    categories: t.Array(t.String(), { description: 'The keys of the bundle after manifest, in the order they are streamed.' }),
    counts: t.Record(t.String(), Int({ minimum: 0 }), {
      description: 'Rows per category (tenant: 1). Counted before streaming; each array holds exactly this many rows (at most this many under concurrent deletes, see end_of_export).',
    }),
    omitted: t.Array(
      t.Object({
        category: t.String(),
        fields: t.Optional(t.Array(t.String())),
        reason: t.String(),
      }),
      { description: 'Columns and whole categories deliberately left out of the bundle, with the reason.' },
    ),
    page_size: Int({ description: 'Rows read per database page while streaming.' }),
  },
  { $id: '#/components/schemas/GdprExportManifest' },
);

export const ExportBundle = t.Object(
  {
    manifest: ExportManifest,
    tenant: Row,
    api_keys: Rows('API key metadata (no key hash, no plaintext).'),
    usage_records: Rows('Metered usage (billing records).'),
    oauth_clients: Rows('OAuth clients (POST /v1/admin/oauth-clients) without their secrets\u2019 hashes (secret_prefix identifies the secret); their scopes and limits are on their api_keys row (key_id).'),
    audit_log: Rows('Administrative actions, including this export (gdpr.exported).'),
    score_results: Rows('Every credit score computed for the tenant.'),
    esg_assessments: Rows('Every ESG assessment with its answers and result.'),
    erp_connections: Rows('ERP connections without OAuth tokens, OAuth state or PKCE verifier.'),
    sync_runs: Rows('ERP synchronisation runs.'),
    invoices: Rows('Synchronised sales documents.'),
    bank_transactions: Rows('Synchronised bank transactions.'),
    webhook_endpoints: Rows('Webhook endpoints without signing secrets (secret_prefix only).'),
    events: Rows('Events emitted for the tenant.'),
    webhook_deliveries: Rows('Delivery attempts of events to webhook endpoints.'),
    credit_decisions: Rows('Every credit decision (POST /v1/decision) with its response.'),
    credit_policies: Rows('The credit policy set per environment (PATCH /v1/admin/credit-policy).'),
    aml_screenings: Rows('Every AML screening (POST /v1/aml/screen) with its response; an AML record kept 7 years.'),
    kyc_verifications: Rows('Every KYC verification (POST /v1/kyc/verify) with its response; an AML record kept 7 years.'),
    saft_runs: Rows('SAF-T parses (POST /v1/saft/parse: each parse_id) and their results.'),
    finance_operations: Rows('Factoring operations (POST /v1/factoring/operation) with their debtors, invoices, pricing and history.'),
    assigned_invoices: Rows('The invoices held by factoring operations and confirming payables (assignment_key set while the assignment is live).'),
    confirming_programmes: Rows('Confirming programmes of anchor buyers (POST /v1/confirming/anchor).'),
    confirming_suppliers: Rows('Suppliers onboarded to confirming programmes.'),
    confirming_payables: Rows('Payables of confirming programmes, their offers and lifecycle.'),
    audit_entries: Rows('The hash-chained audit trails of operations, programmes, payables, notices and insurance submissions (GET /v1/audit/{id}).'),
    cession_notices: Rows('Notices of assignment (POST /v1/notice/cession), the PDF included (base64).'),
    insurance_submissions: Rows('Buyer-limit requests to credit insurers (POST /v1/insurance/submit) and their answers.'),
    csrd_reports: Rows('VSME sustainability reports (POST /v1/csrd/report): the JSON and the PDF (base64) as generated; deleted on erasure.'),
    gdpr_requests: Rows('Data-subject requests (POST /v1/gdpr/request): who asked what, when, the deadline, what was done and kept, the access bundles.'),
    end_of_export: t.Object(
      {
        complete: t.Literal(true),
        streamed_counts: t.Record(t.String(), Int({ minimum: 0 })),
        matches_manifest: t.Boolean({ description: 'false only when rows were deleted while the export streamed' }),
      },
      { description: 'Trailer written last: its presence proves the document is complete.' },
    ),
  },
  {
    $id: '#/components/schemas/GdprExportBundle',
    description:
      'Streamed JSON document (Content-Disposition: attachment). Keys appear in this order: manifest, tenant, the arrays of manifest.categories, end_of_export. Format: docs/gdpr.md.',
  },
);

// ---------------------------------------------------------------------------------------------
// Erase
// ---------------------------------------------------------------------------------------------

/**
 * Body of POST /v1/admin/gdpr/erase. Documented strictly; the route checks the value itself (in
 * `transform`, before Elysia's validation) so that a missing, mistyped or wrong confirmation is
 * always 422 confirmation_required rather than validation_failed.
 */
export const EraseRequest = t.Object({
  confirmation: t.Literal(ERASE_CONFIRMATION, { description: 'Must be exactly ERASE-MY-DATA; anything else → 422 confirmation_required.' }),
});

export const RetainedUnderLegalBasis = t.Object(
  {
    law: t.String({ examples: ['Lei n.º 83/2017, art. 51.º'] }),
    gdpr_basis: t.String({ examples: ['GDPR art. 17(3)(b) and art. 6(1)(c)'] }),
    years: Int({ examples: [7] }),
    retain_until: DateTime,
    categories: t.Array(t.String(), { description: 'Categories kept (anonymised) until retain_until, then purged.' }),
    retained_counts: t.Record(t.String(), Int({ minimum: 0 }), { description: 'Rows kept per retained category.' }),
    deleted_categories: t.Array(t.String(), { description: 'Categories no law requires: deleted now.' }),
    deleted_counts: t.Record(t.String(), Int({ minimum: 0 }), { description: 'Rows deleted per deleted category.' }),
    anonymised: t.Array(t.String(), { description: 'What was anonymised in the retained rows (category.column → treatment).' }),
  },
  { $id: '#/components/schemas/RetainedUnderLegalBasis' },
);

export const EraseResponse = t.Object({
  erased: t.Literal(true),
  tenant_status: t.Literal('terminated'),
  redacted_api_keys: Int({ minimum: 0, description: 'Keys revoked and renamed (all keys of the tenant, both environments)' }),
  redacted_usage_rows: Int({ minimum: 0, description: 'Usage records kept under retention (request_ids removed)' }),
  redacted_audit_rows: Int({ minimum: 0, description: 'Audit records whose details were cleared (not counting the gdpr.erased record)' }),
  retained_under_legal_basis: RetainedUnderLegalBasis,
  completed_at: DateTime,
});

export type EraseResult = typeof EraseResponse.static;
export type ExportManifestBody = typeof ExportManifest.static;

// ---------------------------------------------------------------------------------------------
// Data-subject requests (POST /v1/gdpr/request)
// ---------------------------------------------------------------------------------------------

const DsrType = t.Union([t.Literal('access'), t.Literal('erasure'), t.Literal('rectification'), t.Literal('restriction')]);
const DsrStatus = t.Union([t.Literal('received'), t.Literal('in_progress'), t.Literal('completed'), t.Literal('partially_completed'), t.Literal('rejected')]);
const SubjectIds = t.Object(
  {
    nif: t.Optional(t.String({ pattern: '^[0-9]{9}$', description: 'A natural person\u2019s NIF (prefixes 1, 2, 3, 45)' })),
    name: t.Optional(t.String({ minLength: 1, maxLength: 300 })),
    birth_date: t.Optional(RequestDate({ description: 'Narrows name matches in screenings that recorded one' })),
    email: t.Optional(t.String({ format: 'email', maxLength: 254 })),
  },
  { description: 'At least one of nif, name, email' },
);

export const SubjectRequestBody = t.Object({
  type: DsrType,
  subject: SubjectIds,
  requested_at: t.Optional(RequestDateTime({ description: 'When the person asked the tenant: the one-month deadline runs from it (default now)' })),
  corrections: t.Optional(t.Object({ name: t.Optional(t.String({ minLength: 1, maxLength: 300 })), email: t.Optional(t.String({ format: 'email', maxLength: 254 })) }, { description: 'rectification: the corrected values' })),
  note: t.Optional(t.String({ maxLength: 1000, description: 'Your own note (kept with the request)' })),
});

export const SubjectRequestView = t.Object({
  request_id: t.String(),
  type: DsrType,
  status: DsrStatus,
  subject: SubjectIds,
  corrections: t.Union([t.Object({ name: t.Optional(t.String()), email: t.Optional(t.String()) }), t.Null()]),
  note: t.Union([t.String(), t.Null()]),
  requested_at: DateTime,
  due_at: t.String({ format: 'date-time', description: 'One month after requested_at (GDPR art. 12(3))' }),
  overdue: t.Boolean(),
  found: t.Union([t.Record(t.String(), Int()), t.Null()], { description: 'Rows about the person, per category, once searched' }),
  actions: t.Array(t.Object({ category: t.String(), action: t.String(), count: Int() })),
  retained: t.Array(t.Object({ category: t.String(), count: Int(), reason: t.String(), retain_until: t.Union([t.String(), t.Null()]) }), { description: 'What is kept, and why (legal holds)' }),
  bundle_url: t.Union([t.String(), t.Null()], { description: 'access: where the person\u2019s data is, once completed' }),
  reason: t.Union([t.String(), t.Null()]),
  created_at: DateTime,
  updated_at: DateTime,
  completed_at: t.Union([DateTime, t.Null()]),
});
export const SubjectRequestList = t.Object({ data: t.Array(SubjectRequestView), next_cursor: t.Union([t.String(), t.Null()]) });
export const SubjectRequestQuery = t.Object({
  status: t.Optional(DsrStatus),
  type: t.Optional(DsrType),
  limit: PageLimit,
  cursor: t.Optional(t.String({ pattern: '^dsr_[0-9a-f-]{36}$' })),
});
export const SubjectRequestParams = t.Object({ id: t.String({ pattern: '^dsr_[0-9a-f-]{36}$' }) });
export const SubjectRequestCloseParams = t.Object({ id: t.String({ pattern: '^dsr_[0-9a-f-]{36}$' }), action: t.Union([t.Literal('complete'), t.Literal('reject')]) });
export const SubjectRequestCloseBody = t.Optional(t.Object({ reason: t.Optional(t.String({ minLength: 1, maxLength: 1000 })) }));
export const SubjectBundle = t.Object({
  request_id: t.String(),
  generated_at: DateTime,
  subject: SubjectIds,
  categories: t.Record(t.String(), t.Array(t.Record(t.String(), t.Unknown())), { description: 'Every row about the person, by category, as stored (snake_case)' }),
});
