import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { hashKey } from '../src/features/tenants/service';
import { sha256Hex } from '../src/lib/crypto';
import { gdprService, purgeExpiredRetention } from '../src/features/gdpr';
import { EraseResponse, EXPORT_ARRAY_CATEGORIES } from '../src/features/gdpr/model';
import { RETAINED_CATEGORIES } from '../src/features/gdpr/service';
import { expectError, makeApp, TEST_DB, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const SCORE_NIF = '599000015';
const YEAR_MS = 365.25 * 86_400_000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** every tenant-owned table, by export category name */
const TABLES = (h: TestApp) => {
  const t = h.ctx.database.t;
  return {
    api_keys: t.apiKeys,
    oauth_clients: t.oauthClients,
    usage_records: t.usageRecords,
    audit_log: t.auditLog,
    score_results: t.scoreResults,
    esg_assessments: t.esgAssessments,
    erp_connections: t.erpConnections,
    sync_runs: t.syncRuns,
    invoices: t.invoices,
    bank_transactions: t.bankTransactions,
    webhook_endpoints: t.webhookEndpoints,
    events: t.events,
    webhook_deliveries: t.webhookDeliveries,
    idempotency_keys: t.idempotencyKeys,
    credit_decisions: t.creditDecisions,
    credit_policies: t.creditPolicies,
    aml_screenings: t.amlScreenings,
    kyc_verifications: t.kycVerifications,
    saft_runs: t.saftRuns,
    finance_operations: t.financeOperations,
    assigned_invoices: t.assignedInvoices,
    confirming_programmes: t.confirmingProgrammes,
    confirming_suppliers: t.confirmingSuppliers,
    confirming_payables: t.confirmingPayables,
    audit_entries: t.auditEntries,
    cession_notices: t.cessionNotices,
    insurance_submissions: t.insuranceSubmissions,
    gdpr_requests: t.gdprRequests,
    csrd_reports: t.csrdReports,
  };
};

async function rowsOf(h: TestApp, tenantId: string) {
  const { db, t } = h.ctx.database;
  const out: Record<string, any[]> = { tenant: await db.select().from(t.tenants).where(eq(t.tenants.id, tenantId)) };
  for (const [name, table] of Object.entries(TABLES(h))) {
    const rows = await db.select().from(table as typeof t.invoices).where(eq((table as typeof t.invoices).tenantId, tenantId));
    out[name] = rows.sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  // the event dispatcher hands events over in the background, whatever the test does: not a change
  out.events = out.events!.map((e) => ({ ...e, dispatchedAt: null }));
  return out;
}

/** The rows of one environment: env column; audit records by their acting key's env; deliveries by their event's env. */
async function rowsOfEnv(h: TestApp, tenantId: string, env: 'sandbox' | 'live') {
  const all = await rowsOf(h, tenantId);
  const keyEnv = new Map(all.api_keys!.map((k) => [k.id, k.env]));
  const eventEnv = new Map(all.events!.map((e) => [e.id, e.env]));
  const out: Record<string, any[]> = {};
  for (const [name, rows] of Object.entries(all)) {
    if (name === 'tenant') out[name] = rows;
    else if (name === 'audit_log') out[name] = rows.filter((r) => (r.actorKeyId ? keyEnv.get(r.actorKeyId) === env : (keyEnv.get(r.target) ?? 'live') === env));
    else if (name === 'webhook_deliveries') out[name] = rows.filter((r) => eventEnv.get(r.eventId) === env);
    else out[name] = rows.filter((r) => r.env === env);
  }
  return out;
}

interface Populated {
  tenantId: string;
  key: string;
  keyId: string;
  liveKey: string;
  liveKeyId: string;
  /** strings that must never appear in an export */
  secrets: string[];
  /** personal data that must be gone after erasure */
  pii: string[];
}

/** A tenant with rows in every table: through the API where it exists, directly otherwise. */
async function populate(h: TestApp, tag: string): Promise<Populated> {
  const t0 = await h.tenant({ name: `Acme ${tag} Lda` });
  const { tenant_id: tenantId, api_key: key, api_key_id: keyId } = t0;
  const live = await h.ctx.tenants.createKey({ tenantId, env: 'live', name: `live key of ${tag}` });
  const spare = await h.ctx.tenants.createKey({ tenantId, env: 'sandbox', name: `spare ${tag}` });

  // API: score (twice, with an Idempotency-Key once), ESG, a revoke with a personal reason
  expect((await h.json('POST', '/v1/score', { key, body: { nif: SCORE_NIF, customer_reference: `loan-${tag}` } })).status).toBe(200);
  const idem = await h.json('POST', '/v1/score', {
    key,
    body: { nif: SCORE_NIF, refresh: 'force_refresh', customer_reference: `loan2-${tag}` },
    headers: { 'idempotency-key': `idem-${tag}` },
  });
  expect(idem.status).toBe(200);
  expect((await h.json('POST', '/v1/esg', { key, body: { ...ESG_EXAMPLES.leader, customer_reference: `esg-${tag}` } })).status).toBe(200);
  const decision = await h.json('POST', '/v1/decision', { key, body: { nif: SCORE_NIF, context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 }, customer_reference: `deal-${tag}` } });
  expect(decision.status).toBe(200);
  const factoring = await h.json('POST', '/v1/factoring/operation', { key, body: { seller_nif: '599000031', modality: 'recourse', auto_approve: false, customer_reference: `fop-${tag}`, invoices: [{ number: `FT ${tag}/1`, debtor_nif: SCORE_NIF, issue_date: '2026-11-01', due_date: '2027-01-31', amount_cents: 100_000 }] } });
  expect(factoring.status).toBe(201);
  expect((await h.json('PATCH', '/v1/admin/credit-policy', { key, body: { margin_bps: 75 } })).status).toBe(200);
  const rev = await h.json('POST', '/v1/admin/keys/revoke', { key, body: { api_key_id: spare.api_key_id, reason: `Joana ${tag} left` } });
  expect(rev.status).toBe(200);
  // an OAuth client, and a CSRD report printing what the caller typed (a sole trader's name and address)
  const client = await h.json('POST', '/v1/admin/oauth-clients', { key: live.api_key, body: { name: `backend of Ines ${tag}`, scopes: ['esg'] } });
  expect(client.status).toBe(201);
  const assessed = await h.json('POST', '/v1/esg', { key: live.api_key, body: ESG_EXAMPLES.leader });
  const report = await h.json('POST', '/v1/csrd/report', { key: live.api_key, body: { assessment_id: assessed.body.assessment_id, company: { name: `Ines ${tag} Unipessoal`, address: `Rua ${tag} 1, Lisboa` } } });
  expect(report.status).toBe(201);
  await h.ctx.usage.flush();

  const now = h.clock.now();
  const db = h.ctx.database;
  const t = db.t;
  const rnd = () => crypto.randomUUID();
  const enc = (what: string) => `v1.${what}-${tag}-${rnd().slice(0, 8)}.tag.ct`;
  const access = enc('access');
  const refresh = enc('refresh');
  const pkce = enc('pkce');
  const stateHash = `statehash${tag}${rnd().replaceAll('-', '')}`;
  const whSecret = enc('whsec');
  const whPrev = enc('whprev');
  const connId = rnd();
  const endpointId = rnd();
  const eventIds = [`evt_${rnd().replaceAll('-', '')}`, `evt_${rnd().replaceAll('-', '')}`];

  await db.withTx(async (tx) => {
    await tx.insert(t.usageRecords).values({
      id: rnd(),
      tenantId,
      apiKeyId: live.api_key_id,
      env: 'live',
      meter: 'erp_sync',
      quantity: 3,
      unitAmountCents: 20,
      amountCents: 60,
      billable: true,
      requestIds: `req_${tag}`,
      createdAt: now,
    });
    await tx.insert(t.amlScreenings).values({
      id: `scr_${Bun.randomUUIDv7()}`,
      tenantId,
      env: 'sandbox',
      name: 'Eric Badege',
      status: 'match',
      topScore: 1,
      customerReference: `onb-${tag}`,
      monitor: false,
      response: JSON.stringify({ status: 'match', customer_reference: `onb-${tag}` }),
      createdAt: now,
    });
    await tx.insert(t.saftRuns).values({
      id: `saft_${Bun.randomUUIDv7()}`,
      tenantId,
      env: 'sandbox',
      status: 'succeeded',
      bytes: 100,
      result: JSON.stringify({ valid: true }),
      createdAt: now,
    });
    // receivables-finance records the factoring call above does not make
    const programme = `cfp_${Bun.randomUUIDv7()}`;
    await tx.insert(t.confirmingProgrammes).values({ id: programme, tenantId, env: 'sandbox', anchorNif: '599000015', status: 'active', limitCents: 1_000_000, data: {}, version: 1, createdAt: now, updatedAt: now });
    await tx.insert(t.confirmingSuppliers).values({ id: crypto.randomUUID(), tenantId, env: 'sandbox', programmeId: programme, supplierNif: '599000023', data: { email: `joana.${tag}@example.pt` }, createdAt: now });
    await tx.insert(t.confirmingPayables).values({ id: `cpy_${Bun.randomUUIDv7()}`, tenantId, env: 'sandbox', programmeId: programme, supplierNif: '599000023', number: `FT ${tag}/9`, status: 'approved', amountCents: 5000, dueDate: '2027-01-31', data: {}, version: 1, createdAt: now, updatedAt: now });
    await tx.insert(t.cessionNotices).values({ id: `ntc_${Bun.randomUUIDv7()}`, tenantId, env: 'sandbox', operationId: null, language: 'pt-PT', sha256: '0'.repeat(64), pdf: 'JVBERi0=', data: {}, createdAt: now });
    await tx.insert(t.csrdReports).values({ id: `rep_${Bun.randomUUIDv7()}`, tenantId, env: 'sandbox', assessmentId: crypto.randomUUID(), nif: '512345678', language: 'pt-PT', sha256: '0'.repeat(64), pdf: 'JVBERi0=', data: {}, createdAt: now });
    await tx.insert(t.gdprRequests).values({ id: `dsr_${Bun.randomUUIDv7()}`, tenantId, env: 'sandbox', type: 'access', status: 'completed', subject: { name: `Maria ${tag}` }, result: { found: {}, bundle: { categories: { invoices: [{ customer_name: `Maria ${tag}` }] } } }, reason: null, requestedAt: now, dueAt: now, version: 2, createdAt: now, updatedAt: now, completedAt: now });
    await tx.insert(t.insuranceSubmissions).values({ id: `ins_${Bun.randomUUIDv7()}`, tenantId, env: 'sandbox', buyerNif: '599000015', status: 'full', requestedCents: 100_000, grantedCents: 100_000, insurer: 'sandbox', data: {}, createdAt: now });
    await tx.insert(t.kycVerifications).values({
      id: `kyc_${Bun.randomUUIDv7()}`,
      tenantId,
      env: 'sandbox',
      nif: SCORE_NIF,
      outcome: 'pass',
      customerReference: `kyc-${tag}`,
      response: JSON.stringify({ outcome: 'pass', customer_reference: `kyc-${tag}` }),
      createdAt: now,
    });
    await tx.insert(t.auditLog).values({
      id: rnd(),
      tenantId,
      actorKeyId: keyId,
      action: 'support.note',
      target: null,
      requestId: `req_${tag}`,
      details: { note: `called by Rui ${tag}`, email: `rui.${tag}@example.pt` },
      createdAt: now,
    });
    await tx.insert(t.erpConnections).values({
      id: connId,
      tenantId,
      env: 'live',
      provider: 'moloni',
      customerReference: `cust-${tag}`,
      status: 'active',
      stateHash,
      stateExpiresAt: now,
      pkceVerifierEnc: pkce,
      returnUrl: `https://app.example.pt/${tag}/return`,
      accessTokenEnc: access,
      refreshTokenEnc: refresh,
      tokenExpiresAt: now,
      externalAccountId: `acct-${tag}`,
      createdAt: now,
      updatedAt: now,
      connectedAt: now,
    });
    await tx.insert(t.syncRuns).values(
      ['cust', 'other'].map((c) => ({
        id: rnd(),
        tenantId,
        env: 'live',
        provider: 'moloni',
        customerReference: `${c}-${tag}`,
        connectionId: connId,
        mode: 'full',
        since: null,
        status: 'failed',
        attempts: 1,
        invoicesCount: 2,
        transactionsCount: 2,
        cursor: 'cursor-1',
        errorCode: 'upstream',
        errorMessage: `customer ${tag} not found`,
        createdAt: now,
      })),
    );
    // two customer references with the same provider document ids: the pseudonyms must keep them apart
    await tx.insert(t.invoices).values(
      ['cust', 'cust', 'other'].map((c, i) => ({
        id: rnd(),
        tenantId,
        env: i === 2 ? 'sandbox' : 'live',
        provider: 'moloni',
        customerReference: `${c}-${tag}`,
        providerDocumentId: `doc-${i % 2}`,
        documentType: 'FT',
        number: `FT 2026/${i + 1}`,
        atcud: `CSDF7T5H-${i + 1}`,
        issueDate: '2026-11-01',
        dueDate: '2026-12-01',
        customerNif: '509000019',
        customerName: `Maria ${tag} Silva`,
        currency: 'EUR',
        netTotalCents: 10000,
        taxTotalCents: 2300,
        grossTotalCents: 12300,
        status: 'N',
        data: { customer_name: `Maria ${tag} Silva`, customer_email: `maria.${tag}@example.pt`, vat_breakdown: [{ rate: 23, base_cents: 10000, tax_cents: 2300 }] },
        sourceUpdatedAt: '2026-11-01T10:00:00Z',
        syncedAt: now,
      })),
    );
    await tx.insert(t.bankTransactions).values(
      [0, 1].map((i) => ({
        id: rnd(),
        tenantId,
        env: 'live',
        provider: 'moloni',
        customerReference: `cust-${tag}`,
        providerTransactionId: `txn-${i}`,
        bookingDate: '2026-11-05',
        amountCents: 12300,
        currency: 'EUR',
        description: `TRF Maria ${tag} Silva`,
        counterpartyName: `Maria ${tag} Silva`,
        counterpartyIban: `PT50000201231234567890154${i}`,
        matchedInvoiceNumber: 'FT 2026/1',
        sourceUpdatedAt: '2026-11-05T10:00:00Z',
        syncedAt: now,
      })),
    );
    await tx.insert(t.webhookEndpoints).values({
      id: endpointId,
      tenantId,
      env: 'live',
      url: `https://hooks.example.pt/${tag}`,
      description: `Rui ${tag}'s endpoint`,
      enabledEvents: ['*'],
      secretEnc: whSecret,
      secretPrefix: 'whsec_abc',
      previousSecretEnc: whPrev,
      previousSecretExpiresAt: now,
      status: 'active',
      consecutiveFailures: 0,
      createdAt: now,
    });
    await tx.insert(t.events).values(eventIds.map((id) => ({ id, tenantId, env: 'live', type: 'score.updated', data: { nif: SCORE_NIF }, createdAt: now })));
    await tx.insert(t.webhookDeliveries).values(
      eventIds.map((eventId) => ({ id: rnd(), tenantId, eventId, endpointId, status: 'succeeded', attempts: 1, lastStatusCode: 200, createdAt: now, updatedAt: now })),
    );
  });

  return {
    tenantId,
    key,
    keyId,
    liveKey: live.api_key,
    liveKeyId: live.api_key_id,
    secrets: [key, hashKey(key), live.api_key, hashKey(live.api_key), spare.api_key, hashKey(spare.api_key), access, refresh, pkce, stateHash, whSecret, whPrev, client.body.client_secret, sha256Hex(client.body.client_secret)],
    pii: [`Acme ${tag} Lda`, `loan-${tag}`, `fop-${tag}`, `joana.${tag}@`, `esg-${tag}`, `deal-${tag}`, `onb-${tag}`, `kyc-${tag}`, `Joana ${tag}`, `Rui ${tag}`, `rui.${tag}@`, `Rua ${tag} 1`, `Ines ${tag}`, `Maria ${tag}`, `maria.${tag}@`, `cust-${tag}`, `other-${tag}`, `https://hooks.example.pt/${tag}`, `live key of ${tag}`, `spare ${tag}`],
  };
}

async function readText(res: Response) {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  let chunks = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks++;
    text += dec.decode(value, { stream: true });
  }
  return { text: text + dec.decode(), chunks };
}

async function exportViaService(h: TestApp, tenantId: string, env: 'sandbox' | 'live' | 'all' = 'all') {
  const prepared = await gdprService(h.ctx).prepareExport(tenantId, env);
  let text = '';
  for await (const c of prepared.chunks()) text += c;
  return JSON.parse(text);
}

const erase = (h: TestApp, key: string, body?: unknown, headers?: Record<string, string>) => h.json('POST', '/v1/admin/gdpr/erase', { key, body, headers });

let h: TestApp;
let A: Populated;
let B: Populated;
beforeAll(async () => {
  h = await makeApp();
  A = await populate(h, 'AAA');
  B = await populate(h, 'BBB');
});
afterAll(() => h.close());

describe('POST /v1/admin/gdpr/export', () => {
  test('one streamed bundle: every category, manifest counts = array lengths = database rows, only this tenant, no secrets', async () => {
    // the live export first, so that the sandbox one below has a record of it to leave out
    const liveRes = await h.call('POST', '/v1/admin/gdpr/export', { key: A.liveKey, body: {} });
    expect(liveRes.status).toBe(200);
    const liveDoc = JSON.parse(await liveRes.text());
    const res = await h.call('POST', '/v1/admin/gdpr/export', { key: A.key, body: {} });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="export-${A.tenantId}-sandbox-2026-11-22.json"`);
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const { text } = await readText(res);
    const doc = JSON.parse(text);

    expect(Object.keys(doc)).toEqual(['manifest', 'tenant', ...EXPORT_ARRAY_CATEGORIES, 'end_of_export']);
    const m = doc.manifest;
    expect(m).toMatchObject({ format_version: '1', tenant_id: A.tenantId, environments: ['sandbox'], generated_at: h.clock.now().toISOString() });
    expect(m.categories).toEqual(['tenant', ...EXPORT_ARRAY_CATEGORIES]);
    expect(m.counts.tenant).toBe(1);
    expect(liveDoc.manifest.environments).toEqual(['live']);
    const db = await rowsOfEnv(h, A.tenantId, 'sandbox');
    const liveDb = await rowsOfEnv(h, A.tenantId, 'live');
    const everything = await rowsOf(h, A.tenantId);
    for (const c of EXPORT_ARRAY_CATEGORIES) {
      expect({ c, n: doc[c].length }).toEqual({ c, n: m.counts[c] });
      expect({ c, n: db[c]!.length }).toEqual({ c, n: m.counts[c] });
      // the two environments' exports together hold every row of the tenant (the live one was taken before the sandbox export's audit record)
      expect({ c, n: m.counts[c] + liveDoc.manifest.counts[c] }).toEqual({ c, n: everything[c]!.length });
      expect({ c, n: liveDb[c]!.length }).toEqual({ c, n: liveDoc.manifest.counts[c] });
      expect(m.counts[c] + liveDoc.manifest.counts[c]).toBeGreaterThan(0);
      for (const row of doc[c]) expect(row.tenant_id).toBe(A.tenantId);
      // not one row of the other environment
      for (const row of doc[c]) if ('env' in row) expect({ c, env: row.env }).toEqual({ c, env: 'sandbox' });
      for (const row of liveDoc[c]) if ('env' in row) expect({ c, env: row.env }).toEqual({ c, env: 'live' });
      expect(doc[c].map((r: any) => r.id).filter((id: string) => liveDoc[c].some((l: any) => l.id === id))).toEqual([]);
    }
    expect(doc.end_of_export).toEqual({ complete: true, streamed_counts: m.counts, matches_manifest: true });
    // a few exact numbers: 2 sandbox keys (live: 1 and the OAuth client's principal), 1 sandbox invoice (2 live), audit includes this export
    expect(m.counts.api_keys).toBe(2);
    expect(liveDoc.manifest.counts.api_keys).toBe(2);
    expect(liveDoc.manifest.counts.oauth_clients).toBe(1);
    expect(m.counts.invoices).toBe(1);
    expect(liveDoc.manifest.counts.invoices).toBe(2);
    expect(m.counts.score_results).toBe(2);
    expect(m.counts.esg_assessments).toBe(1);
    expect(doc.audit_log.map((a: any) => a.action)).toContain('gdpr.exported');
    expect(liveDoc.audit_log.map((a: any) => a.action).sort()).toEqual(['gdpr.exported', 'oauth_client.created']);
    // what the live export holds of the tenant's production data is not in the sandbox one
    for (const c of ['erp_connections', 'sync_runs', 'bank_transactions', 'webhook_endpoints', 'events', 'webhook_deliveries']) {
      expect({ c, n: m.counts[c] }).toEqual({ c, n: 0 });
      expect(liveDoc.manifest.counts[c]).toBeGreaterThan(0);
    }
    for (const live of ['cust-AAA', 'https://hooks.example.pt/AAA', 'https://app.example.pt/AAA', 'live key of AAA', 'acct-AAA']) expect(text).not.toContain(live);
    for (const sandbox of ['loan-AAA', 'esg-AAA', 'Joana AAA', 'called by Rui AAA', 'rui.AAA@']) expect(JSON.stringify(liveDoc)).not.toContain(sandbox);

    // snake_case keys, ISO dates
    expect(doc.tenant).toMatchObject({ id: A.tenantId, name: 'Acme AAA Lda', status: 'active', daily_quota: expect.any(Number) });
    expect(doc.tenant.created_at).toMatch(ISO);
    expect(doc.invoices[0].synced_at).toMatch(ISO);
    expect(doc.invoices[0].customer_name).toBe('Maria AAA Silva');
    for (const d of [doc, liveDoc]) for (const c of EXPORT_ARRAY_CATEGORIES) for (const k of Object.keys(d[c][0] ?? {})) expect(k).toMatch(/^[a-z0-9_]+$/);

    // no secrets, hashes, tokens; no column that holds them
    const liveText = JSON.stringify(liveDoc);
    for (const s of A.secrets) expect(text).not.toContain(s);
    for (const s of A.secrets) expect(liveText).not.toContain(s);
    for (const d of [doc, liveDoc])
      for (const c of EXPORT_ARRAY_CATEGORIES)
        for (const row of d[c])
          for (const col of ['key_hash', 'access_token_enc', 'refresh_token_enc', 'pkce_verifier_enc', 'state_hash', 'secret_enc', 'previous_secret_enc']) expect(row).not.toHaveProperty(col);
    expect(liveDoc.webhook_endpoints[0].secret_prefix).toBe('whsec_abc');
    expect(m.omitted.map((o: any) => o.category)).toEqual(expect.arrayContaining(['api_keys', 'erp_connections', 'webhook_endpoints', 'idempotency_keys']));

    // nothing of the other tenant
    expect(text).not.toContain(B.tenantId);
    expect(text).not.toContain('BBB');
    for (const s of B.secrets) expect(text).not.toContain(s);
  });

  test('no body and a live key work too; the export is audited', async () => {
    const res = await h.call('POST', '/v1/admin/gdpr/export', { key: A.liveKey });
    expect(res.status).toBe(200);
    const doc = JSON.parse(await res.text());
    expect(doc.manifest.tenant_id).toBe(A.tenantId);
    const a = h.ctx.database.t.auditLog;
    const audits = await h.ctx.database.db.select().from(a).where(eq(a.tenantId, A.tenantId));
    expect(audits.filter((r) => r.action === 'gdpr.exported').length).toBeGreaterThanOrEqual(2);
  });

  test('an Idempotency-Key does not block a repeated export (the stream is not stored, the claim is released)', async () => {
    const headers = { 'idempotency-key': 'export-twice' };
    const first = await h.call('POST', '/v1/admin/gdpr/export', { key: A.key, body: {}, headers });
    expect(first.status).toBe(200);
    expect(JSON.parse(await first.text()).manifest.tenant_id).toBe(A.tenantId);
    const second = await h.call('POST', '/v1/admin/gdpr/export', { key: A.key, body: {}, headers });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.parse(await second.text()).end_of_export.complete).toBe(true);
  });

  test('403 without the gdpr:manage scope, 401 without a key (both routes)', async () => {
    const scoped = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('POST', '/v1/admin/gdpr/export', { key: scoped.api_key, body: {} }), 403, 'insufficient_scope');
    expectError(await erase(h, scoped.api_key, { confirmation: 'ERASE-MY-DATA' }), 403, 'insufficient_scope');
    expectError(await h.json('POST', '/v1/admin/gdpr/export', { body: {} }), 401, 'missing_api_key');
    expectError(await h.json('POST', '/v1/admin/gdpr/erase', { body: { confirmation: 'ERASE-MY-DATA' } }), 401, 'missing_api_key');
    const manage = await h.tenant({ scopes: ['gdpr:manage'] });
    expect((await h.call('POST', '/v1/admin/gdpr/export', { key: manage.api_key })).status).toBe(200);
  });

  test('both routes are in the OpenAPI document with their schemas', async () => {
    const doc = (await h.json('GET', '/openapi.json')).body;
    const exp = doc.paths['/v1/admin/gdpr/export'].post;
    const era = doc.paths['/v1/admin/gdpr/erase'].post;
    expect(exp.operationId).toBe('gdprExport');
    expect(era.operationId).toBe('gdprErase');
    expect(era.security).toEqual([{ bearerAuth: [] }, { oauth2: ['gdpr:manage'] }]);
    expect(era.requestBody.required).toBe(true);
    expect(era.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/EraseRequest' });
    expect(JSON.stringify(doc.components.schemas.EraseRequest)).toContain('ERASE-MY-DATA');
    expect(era.responses['422'].description).toContain('confirmation_required');
    expect(JSON.stringify(doc)).toContain('retained_under_legal_basis');
  });
});

describe('POST /v1/admin/gdpr/erase', () => {
  test('wrong, missing or mistyped confirmation → 422 confirmation_required and nothing changes', async () => {
    const before = await rowsOf(h, A.tenantId);
    const bad: unknown[] = [undefined, {}, { confirmation: 'erase-my-data' }, { confirmation: 'ERASE-MY-DATA ' }, { confirmation: 1 }, { confirmation: null }, { confirmation: ['ERASE-MY-DATA'] }, [], 'ERASE-MY-DATA'];
    for (const body of bad) {
      const b = expectError(await erase(h, A.liveKey, body), 422, 'confirmation_required');
      expect(b.fields).toEqual([{ path: 'confirmation', message: 'must be exactly ERASE-MY-DATA' }]);
    }
    expectError(await h.json('POST', '/v1/admin/gdpr/erase', { key: A.liveKey, rawBody: '{"confirmation": "nope"}', headers: { 'content-type': 'application/json' } }), 422, 'confirmation_required');
    expect(await rowsOf(h, A.tenantId)).toEqual(before);
  });

  test('a sandbox key cannot erase the tenant (both environments): 403 live_key_required whatever the body, nothing changes', async () => {
    const before = await rowsOf(h, A.tenantId);
    for (const body of [{ confirmation: 'ERASE-MY-DATA' }, {}, undefined, { confirmation: 'nope' }, []]) {
      const b = expectError(await erase(h, A.key, body), 403, 'live_key_required');
      expect(b.message).toContain('sk_live_');
      expect(b.docsUrl).toMatch(/\/docs\/errors#live_key_required$/);
    }
    // also with an Idempotency-Key (nothing stored that a live key's retry could replay)
    expectError(await erase(h, A.key, { confirmation: 'ERASE-MY-DATA' }, { 'idempotency-key': 'sandbox-erase' }), 403, 'live_key_required');
    expect(await rowsOf(h, A.tenantId)).toEqual(before);
    // both keys still work
    expect((await h.json('POST', '/v1/score', { key: A.key, body: { nif: SCORE_NIF } })).status).toBe(200);
    expect((await h.call('POST', '/v1/admin/gdpr/export', { key: A.liveKey, body: {} })).status).toBe(200);
    // the code is catalogued and documented
    expect(await (await h.call('GET', '/docs/errors')).text()).toContain('live_key_required');
    const doc = (await h.json('GET', '/openapi.json')).body;
    expect(doc.paths['/v1/admin/gdpr/erase'].post.responses['403'].description).toContain('live_key_required');
  });

  test('erase: keys revoked, PII anonymised, AML rows kept 7 years, the rest deleted, real counts; the other tenant untouched', async () => {
    h.clock.advance(3600_000); // the key revoked during populate keeps its earlier revoked_at
    const before = await rowsOf(h, A.tenantId);
    const otherBefore = await rowsOf(h, B.tenantId);
    const r = await erase(h, A.liveKey, { confirmation: 'ERASE-MY-DATA' }, { 'idempotency-key': 'erase-once' });
    expect(r.status).toBe(200);
    expect(Value.Check(EraseResponse, r.body)).toBe(true);
    const now = h.clock.now();
    const retainUntil = new Date(Date.UTC(now.getUTCFullYear() + 7, now.getUTCMonth(), now.getUTCDate(), now.getUTCHours()));
    const b = r.body;
    expect(b).toMatchObject({
      erased: true,
      tenant_status: 'terminated',
      redacted_api_keys: before.api_keys!.length,
      redacted_usage_rows: before.usage_records!.length,
      redacted_audit_rows: before.audit_log!.length,
      completed_at: now.toISOString(),
    });
    expect(b.redacted_api_keys).toBe(4); // 3 keys and the OAuth client's principal
    expect(b.redacted_usage_rows).toBeGreaterThan(0);
    expect(before.usage_records!.reduce((n: number, u: any) => n + u.quantity, 0)).toBeGreaterThanOrEqual(4); // the calls those rows count
    const legal = b.retained_under_legal_basis;
    expect(legal).toMatchObject({ law: 'Lei n.º 83/2017, art. 51.º', years: 7, retain_until: retainUntil.toISOString() });
    expect(legal.categories).toEqual([...RETAINED_CATEGORIES]);
    expect(legal.deleted_categories.sort()).toEqual(['credit_policies', 'csrd_reports', 'erp_connections', 'events', 'idempotency_keys', 'oauth_clients', 'saft_runs', 'webhook_deliveries', 'webhook_endpoints']);
    expect(before.csrd_reports!.length).toBeGreaterThan(0);
    expect(before.oauth_clients!.length).toBe(1);
    for (const c of ['api_keys', 'usage_records', 'score_results', 'esg_assessments', 'sync_runs', 'invoices', 'bank_transactions', 'credit_decisions', 'aml_screenings', 'kyc_verifications'])
      expect({ c, n: legal.retained_counts[c] }).toEqual({ c, n: before[c]!.length });
    expect(legal.retained_counts.audit_log).toBe(before.audit_log!.length + 1);
    // idempotency_keys: the stored replay of the populate step, and this request's own claim
    for (const c of legal.deleted_categories) expect({ c, n: legal.deleted_counts[c] }).toEqual({ c, n: before[c]!.length + (c === 'idempotency_keys' ? 1 : 0) });

    const after = await rowsOf(h, A.tenantId);
    // tenant
    expect(after.tenant![0]).toMatchObject({ status: 'terminated', name: `erased-tenant-${A.tenantId.slice(0, 8)}` });
    expect(after.tenant![0].terminatedAt).toEqual(now);
    expect(after.tenant![0].retainUntil).toEqual(retainUntil);
    // keys: all revoked (a key revoked earlier keeps its date), renamed, reason replaced
    for (const k of after.api_keys!) {
      expect(k).toMatchObject({ name: 'erased', revokeReason: 'gdpr_erasure', retainUntil });
      expect(k.revokedAt).toBeInstanceOf(Date);
    }
    expect(after.api_keys!.filter((k) => k.revokedAt.getTime() === now.getTime()).length).toBe(3); // 2 keys and the OAuth client's principal
    // retained rows carry retain_until, personal data removed
    for (const c of ['api_keys', 'usage_records', 'audit_log', 'score_results', 'esg_assessments', 'sync_runs', 'invoices', 'bank_transactions', 'credit_decisions', 'aml_screenings', 'kyc_verifications'])
      for (const row of after[c]!) expect({ c, retainUntil: row.retainUntil }).toEqual({ c, retainUntil });
    for (const u of after.usage_records!) expect(u.requestIds).toBeNull();
    for (const a of after.audit_log!) if (a.action !== 'gdpr.erased') expect(a.details).toEqual({});
    const erasedAudit = after.audit_log!.find((a) => a.action === 'gdpr.erased')!;
    expect(erasedAudit).toMatchObject({ actorKeyId: A.liveKeyId, target: A.tenantId });
    expect(erasedAudit.details).toMatchObject({ retained_counts: legal.retained_counts, deleted_counts: legal.deleted_counts });
    for (const s of [...after.score_results!, ...after.esg_assessments!, ...after.credit_decisions!]) expect(s.customerReference).toBeNull();
    for (const d of [...after.credit_decisions!, ...after.aml_screenings!, ...after.kyc_verifications!]) expect(JSON.parse(d.response)).not.toHaveProperty('customer_reference');
    for (const d of [...after.aml_screenings!, ...after.kyc_verifications!]) expect(d.customerReference).toBeNull();
    for (const i of after.invoices!) {
      expect(i.customerName).toBeNull();
      expect(i.customerNif).toBe('509000019');
      expect(i.customerReference).toMatch(/^erased-[0-9a-f]{32}$/);
      expect(i.data).toEqual({ vat_breakdown: [{ rate: 23, base_cents: 10000, tax_cents: 2300 }] });
      expect(i.grossTotalCents).toBe(12300);
    }
    // the two references stay two distinct pseudonyms
    expect(new Set(after.invoices!.map((i) => i.customerReference)).size).toBe(2);
    for (const s of after.sync_runs!) expect(s).toMatchObject({ errorMessage: null, cursor: null, errorCode: 'upstream' });
    for (const x of after.bank_transactions!) expect(x).toMatchObject({ counterpartyName: null, counterpartyIban: null, description: null, amountCents: 12300 });
    for (const c of legal.deleted_categories) expect({ c, n: after[c]!.length }).toEqual({ c, n: 0 });
    const dump = JSON.stringify(after);
    for (const p of A.pii) expect(dump).not.toContain(p);

    // the other tenant is untouched
    expect(await rowsOf(h, B.tenantId)).toEqual(otherBefore);
    expect((await h.json('POST', '/v1/score', { key: B.key, body: { nif: SCORE_NIF } })).status).toBe(200);

    // irreversible: every key of the tenant now gets 401
    expectError(await erase(h, A.key, { confirmation: 'ERASE-MY-DATA' }), 401, 'invalid_api_key');
    expectError(await h.json('POST', '/v1/admin/gdpr/export', { key: A.liveKey, body: {} }), 401, 'invalid_api_key');

    // the export of what is left (service-level: no key works any more) agrees with the erase response
    const doc = await exportViaService(h, A.tenantId);
    expect(doc.manifest.counts.api_keys).toBe(b.redacted_api_keys);
    expect(doc.manifest.counts.usage_records).toBe(b.redacted_usage_rows);
    expect(doc.manifest.counts.audit_log).toBe(b.redacted_audit_rows + 1);
    for (const c of RETAINED_CATEGORIES) expect({ c, n: doc.manifest.counts[c] }).toEqual({ c, n: legal.retained_counts[c] });
    for (const c of legal.deleted_categories) if (c in doc.manifest.counts) expect({ c, n: doc.manifest.counts[c] }).toEqual({ c, n: 0 });
    for (const c of EXPORT_ARRAY_CATEGORIES) expect(doc[c].length).toBe(doc.manifest.counts[c]);
    expect(doc.tenant).toMatchObject({ status: 'terminated', retain_until: retainUntil.toISOString() });
    const text = JSON.stringify(doc);
    for (const p of A.pii) expect(text).not.toContain(p);
  });
});

describe('purgeExpiredRetention', () => {
  test('nothing before retain_until; after it every retained row and the tenant go, counts agree; other tenants stay', async () => {
    const p = await makeApp();
    try {
      const C = await populate(p, 'CCC');
      const D = await populate(p, 'DDD');
      const r = await erase(p, C.liveKey, { confirmation: 'ERASE-MY-DATA' });
      expect(r.status).toBe(200);
      const retained = r.body.retained_under_legal_basis.retained_counts;
      // a usage row written after the erasure (an in-flight request): no retain_until, goes with the tenant
      await p.ctx.database.withTx((tx) =>
        tx.insert(p.ctx.database.t.usageRecords).values({ id: crypto.randomUUID(), tenantId: C.tenantId, env: 'sandbox', meter: 'score', quantity: 1, billable: false, createdAt: p.clock.now() }),
      );
      // an event with its own 30-day retention, and its delivery (no retain_until): they go together
      const E = await p.tenant();
      const evtId = `evt_${crypto.randomUUID().replaceAll('-', '')}`;
      await p.ctx.database.withTx(async (tx) => {
        const now = p.clock.now();
        await tx.insert(p.ctx.database.t.events).values({ id: evtId, tenantId: E.tenant_id, env: 'sandbox', type: 'webhook.test', data: {}, createdAt: now, retainUntil: new Date(now.getTime() + 30 * 86_400_000) });
        await tx.insert(p.ctx.database.t.webhookDeliveries).values({ id: crypto.randomUUID(), tenantId: E.tenant_id, eventId: evtId, endpointId: crypto.randomUUID(), status: 'succeeded', attempts: 1, createdAt: now, updatedAt: now });
      });
      const dBefore = await rowsOf(p, D.tenantId);

      p.clock.advance(7 * YEAR_MS - 2 * 86_400_000);
      const early = await purgeExpiredRetention(p.ctx.database, p.clock.now());
      expect(early).toMatchObject({ events: 1, webhook_deliveries: 1 });
      expect(Object.entries(early).every(([k, n]) => n === 0 || k === 'events' || k === 'webhook_deliveries')).toBe(true);
      const eLeft = await rowsOf(p, E.tenant_id);
      expect([eLeft.events!.length, eLeft.webhook_deliveries!.length, eLeft.tenant!.length]).toEqual([0, 0, 1]);
      expect((await rowsOf(p, C.tenantId)).tenant!.length).toBe(1);

      p.clock.advance(3 * 86_400_000);
      const counts = await purgeExpiredRetention(p.ctx.database, p.clock.now());
      expect(counts.tenants).toBe(1);
      for (const c of RETAINED_CATEGORIES) {
        if (c === 'tenant') continue;
        expect({ c, n: counts[c] }).toEqual({ c, n: retained[c] + (c === 'usage_records' ? 1 : 0) });
      }
      for (const c of ['erp_connections', 'events', 'webhook_endpoints', 'webhook_deliveries', 'idempotency_keys']) expect(counts[c]).toBe(0);
      const left = await rowsOf(p, C.tenantId);
      for (const [c, rows] of Object.entries(left)) expect({ c, n: rows.length }).toEqual({ c, n: 0 });
      expect(await rowsOf(p, D.tenantId)).toEqual(dBefore);
      // idempotent
      expect(Object.values(await purgeExpiredRetention(p.ctx.database, p.clock.now())).every((n) => n === 0)).toBe(true);
    } finally {
      await p.close();
    }
  }, 30_000);
});

describe('streaming export', () => {
  const N = 100_000;
  test(`${N} invoices stream page by page with bounded memory`, async () => {
    const p = await makeApp();
    try {
      const t = await p.tenant();
      const other = await p.tenant();
      const { withTx, t: s } = p.ctx.database;
      const now = p.clock.now();
      const insertStart = performance.now();
      const row = (tenantId: string, i: number, env = 'sandbox') => ({
        id: `inv-${String(i).padStart(7, '0')}-${tenantId.slice(0, 4)}`,
        tenantId,
        env,
        provider: 'demo',
        customerReference: `c-${i % 50}`,
        providerDocumentId: `demo-inv-${i}`,
        documentType: 'FT',
        number: `FT 2026/${i}`,
        atcud: `CSDF7T5H-${i}`,
        issueDate: '2026-11-01',
        dueDate: null,
        customerNif: '509000019',
        customerName: `Customer ${i}`,
        currency: 'EUR',
        netTotalCents: 10000 + i,
        taxTotalCents: 2300,
        grossTotalCents: 12300 + i,
        status: 'N',
        data: { vat_breakdown: [{ rate: 23, base_cents: 10000 + i, tax_cents: 2300 }], references: [] },
        sourceUpdatedAt: '2026-11-01T10:00:00Z',
        syncedAt: now,
      });
      // batches of 1000 rows: SQLite in one transaction (one connection anyway); PostgreSQL one
      // transaction per batch, 8 at a time over the pool
      const batches = Array.from({ length: Math.ceil(N / 1000) }, (_, b) => b * 1000);
      const insertBatch = (start: number) => (tx: Parameters<Parameters<typeof withTx>[0]>[0]) =>
        tx.insert(s.invoices).values(Array.from({ length: Math.min(1000, N - start) }, (_, j) => row(t.tenant_id, start + j)));
      if (TEST_DB === 'postgres') {
        for (let i = 0; i < batches.length; i += 8) await Promise.all(batches.slice(i, i + 8).map((start) => withTx(insertBatch(start))));
      } else {
        await withTx(async (tx) => {
          for (const start of batches) await insertBatch(start)(tx);
        });
      }
      await withTx((tx) => tx.insert(s.invoices).values(Array.from({ length: 10 }, (_, j) => row(other.tenant_id, j))));
      // live rows of the same tenant: not in the sandbox key's export
      await withTx((tx) => tx.insert(s.invoices).values(Array.from({ length: 10 }, (_, j) => row(t.tenant_id, N + j, 'live'))));
      const insertMs = performance.now() - insertStart;

      Bun.gc(true);
      const rss0 = process.memoryUsage().rss;
      const heap0 = process.memoryUsage().heapUsed;
      let peak = rss0;
      let peakHeap = heap0;
      const t0 = performance.now();
      const res = await p.call('POST', '/v1/admin/gdpr/export', { key: t.api_key, body: {} });
      expect(res.status).toBe(200);
      const firstByteMs = performance.now() - t0;
      // read without keeping the text: count the invoice lines (one row per line) as they arrive
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let carry = '';
      let section = '';
      let invoiceLines = 0;
      let bytes = 0;
      let chunks = 0;
      let manifest: any = null;
      const onLine = (line: string) => {
        if (line.startsWith('"manifest": ')) manifest = JSON.parse(line.slice(12, -1));
        const m = /^,?"([a-z_]+)": \[/.exec(line);
        if (m) section = m[1]!;
        else if (line.startsWith(']')) section = '';
        else if (section === 'invoices' && line.startsWith('{')) invoiceLines++;
      };
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks++;
        bytes += value.byteLength;
        const parts = (carry + dec.decode(value, { stream: true })).split('\n');
        carry = parts.pop()!;
        for (const l of parts) onLine(l);
        // live memory, not garbage awaiting collection: a full GC every 16 chunks, then sample
        if (chunks % 16 === 0) {
          Bun.gc(true);
          peak = Math.max(peak, process.memoryUsage().rss);
          peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
        }
      }
      onLine(carry);
      Bun.gc(true);
      peak = Math.max(peak, process.memoryUsage().rss);
      const streamMs = performance.now() - t0;
      expect(manifest.counts.invoices).toBe(N);
      expect(invoiceLines).toBe(N);
      expect(chunks).toBeGreaterThanOrEqual(N / 1000);

      // and the whole text is one valid JSON document with every invoice of this tenant only
      const doc = await exportViaService(p, t.tenant_id, 'sandbox');
      expect(doc.invoices.length).toBe(N);
      expect(doc.manifest.counts.invoices).toBe(N);
      expect(doc.invoices.every((i: any) => i.tenant_id === t.tenant_id)).toBe(true);
      expect(new Set(doc.invoices.map((i: any) => i.id)).size).toBe(N);

      console.log(
        `[gdpr export ${TEST_DB}] ${N} invoices: insert ${Math.round(insertMs)} ms, first byte ${Math.round(firstByteMs)} ms, ` +
          `streamed ${(bytes / 1048576).toFixed(1)} MiB in ${chunks} chunks in ${Math.round(streamMs)} ms, ` +
          `peak RSS delta while streaming ${((peak - rss0) / 1048576).toFixed(1)} MiB, peak heap delta ${((peakHeap - heap0) / 1048576).toFixed(1)} MiB ` +
          `(sampled after a full GC every 16 chunks)`,
      );
    } finally {
      await p.close();
    }
  }, 120_000);
});
