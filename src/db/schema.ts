import type { Kit } from './kit';
import { sql } from 'drizzle-orm';

/** Every table of the service, written once for both dialects (see kit.ts). */
export function defineSchema(k: Kit) {
  const tenants = k.table('tenants', {
    id: k.text('id').primaryKey(),
    name: k.text('name').notNull(),
    plan: k.text('plan').notNull(), // free | starter | growth | enterprise
    status: k.text('status').notNull(), // active | suspended | terminated
    dailyQuota: k.int('daily_quota').notNull(),
    /** per-minute limit used by the enterprise plan (its negotiated value) */
    rateLimitPerMinute: k.int('rate_limit_per_minute'),
    createdAt: k.ts('created_at').notNull(),
    terminatedAt: k.ts('terminated_at'),
    retainUntil: k.ts('retain_until'),
  });

  const apiKeys = k.table(
    'api_keys',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      name: k.text('name').notNull(),
      env: k.text('env').notNull(), // sandbox | live
      keyPrefix: k.text('key_prefix').notNull(),
      keyHash: k.text('key_hash').notNull(),
      scopes: k.json<string[]>('scopes').notNull(),
      rateLimitPerMinute: k.int('rate_limit_per_minute'),
      lastUsedAt: k.ts('last_used_at'),
      revokedAt: k.ts('revoked_at'),
      revokeReason: k.text('revoke_reason'),
      expiresAt: k.ts('expires_at'),
      rotatedFrom: k.text('rotated_from'),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.uniqueIndex('api_keys_hash_idx').on(t.keyHash), k.index('api_keys_tenant_idx').on(t.tenantId)],
  );

  const auditLog = k.table(
    'audit_log',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      actorKeyId: k.text('actor_key_id'),
      action: k.text('action').notNull(),
      target: k.text('target'),
      requestId: k.text('request_id'),
      details: k.json<Record<string, unknown>>('details'),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('audit_tenant_idx').on(t.tenantId, t.createdAt)],
  );

  const usageRecords = k.table(
    'usage_records',
    {
      id: k.text('id').primaryKey(),
      // no foreign key: this append-only ledger takes many rows a second, and the check (a lookup
      // and a row lock on tenants per row) cost more than the insert itself; the tenant id always
      // comes from an authenticated key (docs/decisions.md)
      tenantId: k.text('tenant_id').notNull(),
      apiKeyId: k.text('api_key_id'),
      env: k.text('env').notNull(),
      meter: k.text('meter').notNull(),
      quantity: k.int('quantity').notNull(),
      /** price of one unit in euro cents (fractional for pass-through costs); null when unpriced */
      unitAmountCents: k.real('unit_amount_cents'),
      amountCents: k.real('amount_cents'),
      billable: k.bool('billable').notNull(),
      /** the calls this row counts: their request ids, space-separated (see UsageMeter) */
      requestIds: k.text('request_ids'),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('usage_tenant_idx').on(t.tenantId, t.createdAt)],
  );

  const idempotencyKeys = k.table(
    'idempotency_keys',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull(),
      env: k.text('env').notNull(),
      key: k.text('key').notNull(),
      method: k.text('method').notNull(),
      path: k.text('path').notNull(),
      bodyHash: k.text('body_hash').notNull(),
      state: k.text('state').notNull(), // running | done
      responseStatus: k.int('response_status'),
      responseBody: k.text('response_body'),
      responseHeaders: k.json<Record<string, string>>('response_headers'),
      /** claimed at; a running claim's last sign of life (a streamed upload moves it on as its bytes arrive) */
      createdAt: k.ts('created_at').notNull(),
      expiresAt: k.ts('expires_at').notNull(),
    },
    (t) => [
      k.uniqueIndex('idem_scope_key_idx').on(t.tenantId, t.env, t.key),
      k.index('idem_expires_idx').on(t.expiresAt),
    ],
  );

  const scoreResults = k.table(
    'score_results',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      nif: k.text('nif').notNull(),
      customerReference: k.text('customer_reference'),
      score: k.int('score').notNull(),
      tier: k.text('tier').notNull(),
      pd: k.real('pd'),
      /** the response body as computed (without cache / customer_reference; since 2026-11-27 its reasons without labels, which every read renders from the catalogue) */
      result: k.doc<Record<string, unknown>>('result').notNull(),
      algorithmVersion: k.text('algorithm_version').notNull(),
      synthetic: k.bool('synthetic').notNull(),
      /** why it was computed: request | rescore */
      trigger: k.text('trigger').notNull(),
      computedAt: k.ts('computed_at').notNull(),
      retainUntil: k.ts('retain_until'),
      /** what credit decisions size and explain a limit with (revenue, equity, PD scale, ERP inputs) */
      facts: k.doc<Record<string, unknown>>('facts'),
      /** NACE Rev. 2 section of the company (sector risk counts scored companies by it) */
      sector: k.text('sector'),
    },
    (t) => [
      // the latest score of a NIF; with the sector at its end it also answers sector risk's count
      // of the tenant's scored companies in a sector (an index-only scan of the tenant's entries):
      // a second index by sector cost every score's write ~2 µs on SQLite and ~3.5 µs in
      // PostgreSQL (measured), on the product's busiest write
      k.index('score_lookup_idx').on(t.tenantId, t.env, t.nif, t.computedAt, t.sector),
      // the sandbox generation = number of re-scores of a NIF, counted on every fresh score: a partial
      // index, so that the count is of re-scores alone however many requested scores the NIF has
      // (PostgreSQL's cached plan for the whole index scanned those: ~1 ms a score under load)
      k.index('score_rescores_idx').on(t.tenantId, t.env, t.nif).where(sql`${t.trigger} = 'rescore'`),
    ],
  );

  const esgAssessments = k.table(
    'esg_assessments',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      nif: k.text('nif').notNull(),
      customerReference: k.text('customer_reference'),
      sector: k.text('sector').notNull(),
      answers: k.doc<Record<string, unknown>>('answers').notNull(),
      result: k.doc<Record<string, unknown>>('result').notNull(),
      algorithmVersion: k.text('algorithm_version').notNull(),
      synthetic: k.bool('synthetic').notNull(),
      computedAt: k.ts('computed_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [
      // the latest assessment of a NIF (credit decisions, CSRD reports); its prefix serves every
      // query by tenant (export, erasure). No second index by tenant and time: nothing lists a
      // tenant's assessments by time, and each index costs every assessment's write (~4 of its
      // batch's ~27 WAL pages on SQLite)
      k.index('esg_nif_idx').on(t.tenantId, t.env, t.nif, t.computedAt),
    ],
  );

  const erpConnections = k.table(
    'erp_connections',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      provider: k.text('provider').notNull(),
      customerReference: k.text('customer_reference').notNull(),
      status: k.text('status').notNull(), // pending | active | relink_required | denied | disconnected
      stateHash: k.text('state_hash'),
      stateExpiresAt: k.ts('state_expires_at'),
      pkceVerifierEnc: k.text('pkce_verifier_enc'),
      returnUrl: k.text('return_url').notNull(),
      accessTokenEnc: k.text('access_token_enc'),
      refreshTokenEnc: k.text('refresh_token_enc'),
      tokenExpiresAt: k.ts('token_expires_at'),
      /** provider-side account (e.g. Moloni company_id) */
      externalAccountId: k.text('external_account_id'),
      createdAt: k.ts('created_at').notNull(),
      updatedAt: k.ts('updated_at').notNull(),
      connectedAt: k.ts('connected_at'),
      retainUntil: k.ts('retain_until'),
      /** the connected company's own NIF, when the tenant gave it (its books then feed its decisions) */
      companyNif: k.text('company_nif'),
      /** why the connection is in its status, when it ended or needs relinking (never a secret) */
      statusReason: k.text('status_reason'),
    },
    (t) => [
      k.index('erp_conn_company_idx').on(t.tenantId, t.env, t.companyNif),
      k.uniqueIndex('erp_conn_state_idx').on(t.stateHash),
      k.index('erp_conn_tenant_idx').on(t.tenantId, t.env, t.provider, t.customerReference),
    ],
  );

  const syncRuns = k.table(
    'sync_runs',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      provider: k.text('provider').notNull(),
      customerReference: k.text('customer_reference').notNull(),
      connectionId: k.text('connection_id'),
      mode: k.text('mode').notNull(),
      since: k.ts('since'),
      status: k.text('status').notNull(), // queued | running | succeeded | failed
      attempts: k.int('attempts').notNull(),
      invoicesCount: k.int('invoices_count').notNull(),
      transactionsCount: k.int('transactions_count').notNull(),
      cursor: k.text('cursor'),
      errorCode: k.text('error_code'),
      errorMessage: k.text('error_message'),
      createdAt: k.ts('created_at').notNull(),
      startedAt: k.ts('started_at'),
      finishedAt: k.ts('finished_at'),
      heartbeatAt: k.ts('heartbeat_at'),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [
      k.index('sync_runs_tenant_idx').on(t.tenantId, t.env, t.provider, t.customerReference, t.createdAt),
      k.index('sync_runs_status_idx').on(t.status),
    ],
  );

  const invoices = k.table(
    'invoices',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      provider: k.text('provider').notNull(),
      customerReference: k.text('customer_reference').notNull(),
      providerDocumentId: k.text('provider_document_id').notNull(),
      documentType: k.text('document_type').notNull(),
      number: k.text('number').notNull(),
      atcud: k.text('atcud'),
      issueDate: k.text('issue_date').notNull(),
      dueDate: k.text('due_date'),
      customerNif: k.text('customer_nif'),
      customerName: k.text('customer_name'),
      currency: k.text('currency').notNull(),
      netTotalCents: k.bigint('net_total_cents').notNull(),
      taxTotalCents: k.bigint('tax_total_cents').notNull(),
      grossTotalCents: k.bigint('gross_total_cents').notNull(),
      status: k.text('status').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      sourceUpdatedAt: k.text('source_updated_at').notNull(),
      syncedAt: k.ts('synced_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [
      k.uniqueIndex('invoices_doc_idx').on(t.tenantId, t.env, t.provider, t.customerReference, t.providerDocumentId),
      k.index('invoices_list_idx').on(t.tenantId, t.env, t.provider, t.id),
      // a buyer's payment behaviour across the tenant's synced books (credit decisions)
      k.index('invoices_customer_idx').on(t.tenantId, t.env, t.customerNif),
    ],
  );

  const bankTransactions = k.table(
    'bank_transactions',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      provider: k.text('provider').notNull(),
      customerReference: k.text('customer_reference').notNull(),
      providerTransactionId: k.text('provider_transaction_id').notNull(),
      bookingDate: k.text('booking_date').notNull(),
      amountCents: k.bigint('amount_cents').notNull(),
      currency: k.text('currency').notNull(),
      description: k.text('description'),
      counterpartyName: k.text('counterparty_name'),
      counterpartyIban: k.text('counterparty_iban'),
      matchedInvoiceNumber: k.text('matched_invoice_number'),
      sourceUpdatedAt: k.text('source_updated_at').notNull(),
      syncedAt: k.ts('synced_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [
      k.uniqueIndex('txn_doc_idx').on(t.tenantId, t.env, t.provider, t.customerReference, t.providerTransactionId),
      k.index('txn_list_idx').on(t.tenantId, t.env, t.provider, t.id),
      k.index('txn_matched_idx').on(t.tenantId, t.env, t.provider, t.customerReference, t.matchedInvoiceNumber),
    ],
  );

  const webhookEndpoints = k.table(
    'webhook_endpoints',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      url: k.text('url').notNull(),
      description: k.text('description'),
      enabledEvents: k.json<string[]>('enabled_events').notNull(),
      secretEnc: k.text('secret_enc').notNull(),
      secretPrefix: k.text('secret_prefix').notNull(),
      previousSecretEnc: k.text('previous_secret_enc'),
      previousSecretExpiresAt: k.ts('previous_secret_expires_at'),
      status: k.text('status').notNull(), // active | disabled | failed
      consecutiveFailures: k.int('consecutive_failures').notNull(),
      createdAt: k.ts('created_at').notNull(),
      lastSuccessAt: k.ts('last_success_at'),
      lastFailureAt: k.ts('last_failure_at'),
      /** first failure of the current streak of consecutive failures (null after a success or a re-enable) */
      failingSince: k.ts('failing_since'),
    },
    (t) => [k.index('webhooks_tenant_idx').on(t.tenantId, t.env)],
  );

  const events = k.table(
    'events',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      type: k.text('type').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      /** outbox: set once deliveries for every matching endpoint were created */
      dispatchedAt: k.ts('dispatched_at'),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('events_tenant_idx').on(t.tenantId, t.env, t.id), k.index('events_outbox_idx').on(t.dispatchedAt)],
  );

  const webhookDeliveries = k.table(
    'webhook_deliveries',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      eventId: k.text('event_id').notNull(),
      endpointId: k.text('endpoint_id').notNull(),
      // held: not attempted yet (endpoint disabled/failed, or behind an endpoint's backlog); pending:
      // due or in its retry schedule; succeeded; failed: attempts exhausted
      status: k.text('status').notNull(), // held | pending | succeeded | failed
      attempts: k.int('attempts').notNull(),
      nextAttemptAt: k.ts('next_attempt_at'),
      lockedUntil: k.ts('locked_until'),
      lastStatusCode: k.int('last_status_code'),
      lastError: k.text('last_error'),
      createdAt: k.ts('created_at').notNull(),
      updatedAt: k.ts('updated_at').notNull(),
    },
    (t) => [
      k.uniqueIndex('deliveries_event_endpoint_idx').on(t.eventId, t.endpointId),
      k.index('deliveries_due_idx').on(t.status, t.nextAttemptAt),
      // an endpoint's backlog in event order (held deliveries, replay, the deliveries list)
      k.index('deliveries_endpoint_idx').on(t.endpointId, t.status, t.eventId),
    ],
  );

  /** Small key/value table: one-off facts (demo tenant printed) and cross-process job locks. */
  const creditDecisions = k.table(
    'credit_decisions',
    {
      /** dec_ + UUIDv7: ordered by creation, so it is also the listing cursor */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      nif: k.text('nif').notNull(),
      customerReference: k.text('customer_reference'),
      operationType: k.text('operation_type').notNull(),
      amountEur: k.real('amount_eur').notNull(),
      termDays: k.int('term_days').notNull(),
      approved: k.bool('approved').notNull(),
      tier: k.text('tier').notNull(),
      limitEur: k.real('limit_eur').notNull(),
      spreadBps: k.int('spread_bps').notNull(),
      /**
       * the response body as returned, as JSON text: decisions are appended in batches by the
       * database's hot-path writer (appendRows), which takes scalar columns only
       */
      response: k.text('response').notNull(),
      algorithmVersion: k.text('algorithm_version').notNull(),
      synthetic: k.bool('synthetic').notNull(),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('decisions_tenant_idx').on(t.tenantId, t.env, t.id), k.index('decisions_nif_idx').on(t.tenantId, t.env, t.nif, t.id)],
  );

  const creditPolicies = k.table('credit_policies', {
    /** tenant id + ':' + environment: one policy per tenant and environment */
    id: k.text('id').primaryKey(),
    tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
    env: k.text('env').notNull(),
    policy: k.json<Record<string, unknown>>('policy').notNull(),
    updatedAt: k.ts('updated_at').notNull(),
  });

  // --- AML: sanctions lists (shared by every tenant) and screenings (tenant-scoped) --------------
  const amlListVersions = k.table(
    'aml_list_versions',
    {
      id: k.text('id').primaryKey(),
      list: k.text('list').notNull(), // un | eu
      generatedAt: k.ts('generated_at').notNull(),
      loadedAt: k.ts('loaded_at').notNull(),
      entries: k.int('entries').notNull(),
      names: k.int('names').notNull(),
      source: k.text('source').notNull(),
      /** one active version per list; a load that fails leaves the previous one active */
      active: k.bool('active').notNull(),
    },
    (t) => [k.index('aml_versions_list_idx').on(t.list, t.active)],
  );

  const amlEntries = k.table(
    'aml_entries',
    {
      id: k.text('id').primaryKey(),
      versionId: k.text('version_id').notNull(),
      list: k.text('list').notNull(),
      entryId: k.text('entry_id').notNull(),
      entryType: k.text('entry_type').notNull(),
      /** the parsed entry: names, births, countries, programme, listed_on */
      data: k.json<Record<string, unknown>>('data').notNull(),
    },
    (t) => [k.index('aml_entries_version_idx').on(t.versionId)],
  );

  const amlScreenings = k.table(
    'aml_screenings',
    {
      /** scr_ + UUIDv7 (the listing cursor) */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      name: k.text('name').notNull(),
      status: k.text('status').notNull(),
      topScore: k.real('top_score'),
      customerReference: k.text('customer_reference'),
      monitor: k.bool('monitor').notNull(),
      /** the response as returned, JSON text */
      response: k.text('response').notNull(),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('aml_screenings_tenant_idx').on(t.tenantId, t.env, t.id), k.index('aml_screenings_status_idx').on(t.tenantId, t.env, t.status, t.id)],
  );

  const kycVerifications = k.table(
    'kyc_verifications',
    {
      /** kyc_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      nif: k.text('nif').notNull(),
      outcome: k.text('outcome').notNull(),
      customerReference: k.text('customer_reference'),
      /** the response as returned, JSON text */
      response: k.text('response').notNull(),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('kyc_tenant_idx').on(t.tenantId, t.env, t.id)],
  );

  // --- SAF-T files parsed in the background (above SAFT_SYNC_MAX_BYTES) ---------------------------
  const saftRuns = k.table(
    'saft_runs',
    {
      /** saft_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      status: k.text('status').notNull(), // queued | running | succeeded | failed
      bytes: k.bigint('bytes').notNull(),
      contentEncoding: k.text('content_encoding'),
      publicKeyPem: k.text('public_key_pem'),
      importAs: k.text('import_as'),
      /** the answer when done, JSON text */
      result: k.text('result'),
      errorMessage: k.text('error_message'),
      /** claims so far: a claim's number is its ownership token (a stalled worker's late write is refused) */
      attempts: k.int('attempts').notNull().default(0),
      /** the running worker's last sign of life: older than SAFT_STALL_MS → the recovery sweep re-queues */
      heartbeatAt: k.ts('heartbeat_at'),
      createdAt: k.ts('created_at').notNull(),
      finishedAt: k.ts('finished_at'),
    },
    (t) => [k.index('saft_runs_tenant_idx').on(t.tenantId, t.env, t.id), k.index('saft_runs_status_idx').on(t.status)],
  );

  /** the uploaded file of a queued run, 1 MiB per row (base64), deleted once parsed */
  const saftChunks = k.table(
    'saft_chunks',
    {
      id: k.text('id').primaryKey(),
      runId: k.text('run_id').notNull(),
      seq: k.int('seq').notNull(),
      data: k.text('data').notNull(),
    },
    (t) => [k.uniqueIndex('saft_chunks_run_idx').on(t.runId, t.seq)],
  );

  const appMeta = k.table('app_meta', {
    key: k.text('key').primaryKey(),
    value: k.text('value').notNull(),
    expiresAt: k.ts('expires_at'),
  });

  // --- Receivables finance (issue 21) --------------------------------------------------------------
  /** factoring operations: one assignor (seller), its debtors' invoices, a state machine */
  const financeOperations = k.table(
    'finance_operations',
    {
      /** fop_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      sellerNif: k.text('seller_nif').notNull(),
      sellerName: k.text('seller_name'),
      modality: k.text('modality').notNull(), // recourse | non_recourse
      status: k.text('status').notNull(), // submitted | approved | rejected | funded | settled | defaulted | cancelled
      currency: k.text('currency').notNull(),
      faceCents: k.bigint('face_cents').notNull(),
      /** pricing, per-debtor decisions, contract reference…: the operation as answered, JSON */
      data: k.json<Record<string, unknown>>('data').notNull(),
      /** the due date of its last invoice (YYYY-MM-DD): the default sweep's index */
      lastDueDate: k.text('last_due_date').notNull(),
      reason: k.text('reason'),
      customerReference: k.text('customer_reference'),
      /** bumped by every transition: a transition is a compare-and-set on it */
      version: k.int('version').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
      updatedAt: k.ts('updated_at').notNull(),
    },
    (t) => [k.index('fop_tenant_idx').on(t.tenantId, t.env, t.id), k.index('fop_status_due_idx').on(t.status, t.lastDueDate)],
  );

  /**
   * The invoices of operations (factoring) and programmes' payables (confirming) that are assigned:
   * `assignment_key` (issuer NIF | invoice number) is set while the assignment is live and cleared
   * when it ends, so the unique index refuses a second live assignment (CC art. 584) on both dialects.
   */
  const assignedInvoices = k.table(
    'assigned_invoices',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      /** the operation (fop_) or the confirming payable (cpy_) holding it */
      holderId: k.text('holder_id').notNull(),
      issuerNif: k.text('issuer_nif').notNull(),
      debtorNif: k.text('debtor_nif').notNull(),
      number: k.text('number').notNull(),
      assignmentKey: k.text('assignment_key'),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.uniqueIndex('assigned_live_idx').on(t.tenantId, t.env, t.assignmentKey), k.index('assigned_holder_idx').on(t.holderId)],
  );

  /** confirming (reverse factoring) programmes of an anchor buyer */
  const confirmingProgrammes = k.table(
    'confirming_programmes',
    {
      /** cfp_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      anchorNif: k.text('anchor_nif').notNull(),
      status: k.text('status').notNull(), // active | suspended | closed
      limitCents: k.bigint('limit_cents').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      version: k.int('version').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
      updatedAt: k.ts('updated_at').notNull(),
    },
    (t) => [k.index('cfp_tenant_idx').on(t.tenantId, t.env, t.id)],
  );

  /** suppliers onboarded to a programme */
  const confirmingSuppliers = k.table(
    'confirming_suppliers',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      programmeId: k.text('programme_id').notNull(),
      supplierNif: k.text('supplier_nif').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.uniqueIndex('cfs_programme_nif_idx').on(t.programmeId, t.supplierNif)],
  );

  /** approved payables uploaded by the anchor, their early-payment offers and lifecycle */
  const confirmingPayables = k.table(
    'confirming_payables',
    {
      /** cpy_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      programmeId: k.text('programme_id').notNull(),
      supplierNif: k.text('supplier_nif').notNull(),
      number: k.text('number').notNull(),
      status: k.text('status').notNull(), // approved | accepted | funded | settled | cancelled | defaulted
      amountCents: k.bigint('amount_cents').notNull(),
      dueDate: k.text('due_date').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      version: k.int('version').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
      updatedAt: k.ts('updated_at').notNull(),
    },
    (t) => [k.uniqueIndex('cpy_programme_doc_idx').on(t.programmeId, t.supplierNif, t.number), k.index('cpy_status_due_idx').on(t.status, t.dueDate)],
  );

  /** the append-only, hash-chained audit trail of an operation or programme (GET /v1/audit/{id}) */
  const auditEntries = k.table(
    'audit_entries',
    {
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      subjectId: k.text('subject_id').notNull(),
      seq: k.int('seq').notNull(),
      type: k.text('type').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      apiKeyId: k.text('api_key_id'),
      requestId: k.text('request_id'),
      prevHash: k.text('prev_hash').notNull(),
      hash: k.text('hash').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.uniqueIndex('audit_entries_subject_seq_idx').on(t.subjectId, t.seq), k.index('audit_entries_tenant_idx').on(t.tenantId, t.env, t.subjectId)],
  );

  /** notices of assignment (notificação de cessão de créditos): the PDF as generated */
  const cessionNotices = k.table(
    'cession_notices',
    {
      /** ntc_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      operationId: k.text('operation_id'),
      language: k.text('language').notNull(),
      sha256: k.text('sha256').notNull(),
      /** the PDF, base64 */
      pdf: k.text('pdf').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('ntc_tenant_idx').on(t.tenantId, t.env, t.id)],
  );

  /** buyer-limit requests to credit insurers */
  const insuranceSubmissions = k.table(
    'insurance_submissions',
    {
      /** ins_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      buyerNif: k.text('buyer_nif').notNull(),
      status: k.text('status').notNull(), // pending | full | partial | refused | error
      requestedCents: k.bigint('requested_cents').notNull(),
      grantedCents: k.bigint('granted_cents'),
      insurer: k.text('insurer').notNull(),
      data: k.json<Record<string, unknown>>('data').notNull(),
      createdAt: k.ts('created_at').notNull(),
      /** set on the tenant's erasure: kept until then (commercial and AML records) */
      retainUntil: k.ts('retain_until'),
      decidedAt: k.ts('decided_at'),
    },
    (t) => [k.index('ins_tenant_idx').on(t.tenantId, t.env, t.id), k.index('ins_buyer_idx').on(t.tenantId, t.env, t.buyerNif)],
  );

  /** data-subject requests (POST /v1/gdpr/request): a natural person's rights exercised through the tenant */
  const gdprRequests = k.table(
    'gdpr_requests',
    {
      /** dsr_ + UUIDv7 */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      type: k.text('type').notNull(), // access | erasure | rectification | restriction
      status: k.text('status').notNull(), // received | in_progress | completed | rejected | partially_completed
      subject: k.json<Record<string, unknown>>('subject').notNull(),
      /** what was found, done and kept; the access bundle */
      result: k.json<Record<string, unknown>>('result'),
      reason: k.text('reason'),
      requestedAt: k.ts('requested_at').notNull(),
      dueAt: k.ts('due_at').notNull(),
      version: k.int('version').notNull(),
      createdAt: k.ts('created_at').notNull(),
      updatedAt: k.ts('updated_at').notNull(),
      completedAt: k.ts('completed_at'),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('dsr_tenant_idx').on(t.tenantId, t.env, t.id), k.index('dsr_status_idx').on(t.status)],
  );

  /**
   * OAuth 2.0 clients (client credentials, spec §5.7). A client acts as a principal of its own: an
   * api_keys row (`key_id`, key hash derived from the client id) holds its scopes, rate limit and
   * revocation, so its access tokens go through the same lookup, cache, limits and audit as keys.
   */
  const oauthClients = k.table(
    'oauth_clients',
    {
      /** the client_id: oc_ + 24 hex */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      keyId: k.text('key_id').notNull(),
      name: k.text('name').notNull(),
      secretHash: k.text('secret_hash').notNull(),
      secretPrefix: k.text('secret_prefix').notNull(),
      /** the secret before the last rotation, accepted until previous_secret_expires_at */
      previousSecretHash: k.text('previous_secret_hash'),
      previousSecretExpiresAt: k.ts('previous_secret_expires_at'),
      createdAt: k.ts('created_at').notNull(),
      deletedAt: k.ts('deleted_at'),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('oauth_clients_tenant_idx').on(t.tenantId, t.env)],
  );

  /** the service's token-signing keys (ES256), the private half sealed with the encryption key; published at /.well-known/jwks.json */
  const oauthSigningKeys = k.table('oauth_signing_keys', {
    kid: k.text('kid').primaryKey(),
    alg: k.text('alg').notNull(),
    publicJwk: k.json<Record<string, unknown>>('public_jwk').notNull(),
    privateJwkEnc: k.text('private_jwk_enc').notNull(),
    createdAt: k.ts('created_at').notNull(),
    /** no new token is signed with it after this (a newer key took over) */
    retiredAt: k.ts('retired_at'),
  });

  /** VSME sustainability reports (POST /v1/csrd/report): the data and the PDF as generated, re-downloadable */
  const csrdReports = k.table(
    'csrd_reports',
    {
      /** rep_ + UUID */
      id: k.text('id').primaryKey(),
      tenantId: k.text('tenant_id').notNull().references(() => tenants.id),
      env: k.text('env').notNull(),
      assessmentId: k.text('assessment_id').notNull(),
      nif: k.text('nif').notNull(),
      language: k.text('language').notNull(), // pt-PT | en
      /** SHA-256 (hex) of the PDF bytes */
      sha256: k.text('sha256').notNull(),
      /** the PDF, base64 */
      pdf: k.text('pdf').notNull(),
      /** the JSON report as answered */
      data: k.json<Record<string, unknown>>('data').notNull(),
      createdAt: k.ts('created_at').notNull(),
      retainUntil: k.ts('retain_until'),
    },
    (t) => [k.index('csrd_tenant_idx').on(t.tenantId, t.env, t.createdAt), k.index('csrd_nif_idx').on(t.tenantId, t.env, t.nif)],
  );

  return {
    tenants,
    apiKeys,
    auditLog,
    usageRecords,
    idempotencyKeys,
    scoreResults,
    esgAssessments,
    erpConnections,
    syncRuns,
    invoices,
    bankTransactions,
    webhookEndpoints,
    events,
    webhookDeliveries,
    creditDecisions,
    creditPolicies,
    amlListVersions,
    amlEntries,
    amlScreenings,
    kycVerifications,
    saftRuns,
    saftChunks,
    financeOperations,
    assignedInvoices,
    confirmingProgrammes,
    confirmingSuppliers,
    confirmingPayables,
    auditEntries,
    cessionNotices,
    insuranceSubmissions,
    gdprRequests,
    csrdReports,
    oauthClients,
    oauthSigningKeys,
    appMeta,
  };
}

export type Schema = ReturnType<typeof defineSchema>;
