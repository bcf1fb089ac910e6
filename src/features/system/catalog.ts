/**
 * The spec's catalog of further APIs (§4.3: method, path, readiness; shapes not shown) and what this
 * deployment serves of it, each with the spec's readiness label. An entry not served would answer
 * 404 `not_found` with a message that says so and points at /roadmap; today only POST
 * /v1/bond/issue is not, and answers 501 `not_yet_available`.
 */
export interface CatalogEntry {
  method: string;
  path: string;
  readiness: string;
  /** where this deployment serves it, if it does */
  servedAs?: string;
  /** routed, but only to say it is not available yet (501): not served */
  answersOnly?: true;
}

export const API_CATALOG: CatalogEntry[] = [
  { method: 'POST', path: '/v1/esg-score', readiness: 'live', servedAs: 'POST /v1/esg-score (the same assessment as POST /v1/esg)' },
  { method: 'POST', path: '/v1/decision', readiness: 'beta', servedAs: 'POST /v1/decision (stored: GET /v1/decisions)' },
  { method: 'POST', path: '/v1/aml/screen', readiness: 'live', servedAs: 'POST /v1/aml/screen (stored: GET /v1/aml/screenings)' },
  { method: 'GET', path: '/v1/nif/{nif}', readiness: 'live', servedAs: 'GET /v1/nif/{nif}' },
  { method: 'POST', path: '/v1/kyc/verify', readiness: 'live', servedAs: 'POST /v1/kyc/verify (stored: GET /v1/kyc/verifications/{id})' },
  { method: 'GET', path: '/v1/erp/{provider}/invoices', readiness: 'live', servedAs: 'GET /v1/erp/{provider}/invoices (and /transactions)' },
  { method: 'POST', path: '/v1/saft/parse', readiness: 'live', servedAs: 'POST /v1/saft/parse (raw, gzip or multipart; ?import=true; large files 202: GET /v1/saft/parse/{id})' },
  { method: 'POST', path: '/v1/invoice/extract', readiness: 'live', servedAs: 'POST /v1/invoice/extract' },
  { method: 'POST', path: '/v1/forecast', readiness: 'roadmap, fourth quarter 2026', servedAs: 'POST /v1/forecast (JSON, SVG or PNG)' },
  { method: 'GET', path: '/v1/index/spreads', readiness: 'beta', servedAs: 'GET /v1/index/spreads' },
  { method: 'POST', path: '/v1/reconcile', readiness: 'live', servedAs: 'POST /v1/reconcile' },
  { method: 'POST', path: '/v1/factoring/operation', readiness: 'live', servedAs: 'POST /v1/factoring/operation (GET /v1/factoring/operations, transitions POST /v1/factoring/operation/{id}/{action})' },
  { method: 'POST', path: '/v1/confirming/anchor', readiness: 'live', servedAs: 'POST /v1/confirming/anchor (suppliers, payables, offers: docs/confirming.md)' },
  { method: 'GET', path: '/v1/supplier-portal/embed', readiness: 'live', servedAs: 'GET /v1/supplier-portal/embed (the page: /portal/confirming)' },
  { method: 'POST', path: '/v1/notice/cession', readiness: 'live', servedAs: 'POST /v1/notice/cession (PDF or JSON; GET /v1/notice/cession/{id}[/pdf])' },
  { method: 'WEBHOOK', path: '/v1/events', readiness: 'beta', servedAs: 'signed webhooks (POST /v1/admin/webhooks) and GET /v1/events' },
  { method: 'POST', path: '/v1/csrd/report', readiness: 'live', servedAs: 'POST /v1/csrd/report (JSON, or the PDF with Accept: application/pdf; stored: GET /v1/csrd/reports/{id} and /pdf)' },
  { method: 'POST', path: '/v1/basel/capital', readiness: 'roadmap, fourth quarter 2026', servedAs: 'POST /v1/basel/capital' },
  { method: 'GET', path: '/v1/audit/{operation_id}', readiness: 'beta', servedAs: 'GET /v1/audit/{operation_id}' },
  { method: 'POST', path: '/v1/gdpr/request', readiness: 'live', servedAs: 'POST /v1/gdpr/request (data-subject requests; GET /v1/gdpr/requests[/{id}[/bundle]])' },
  { method: 'POST', path: '/v1/insurance/submit', readiness: 'roadmap, fourth quarter 2026', servedAs: 'POST /v1/insurance/submit (GET /v1/insurance/submissions[/{id}])' },
  { method: 'GET', path: '/v1/credit-limit/{buyer_nif}', readiness: 'roadmap, fourth quarter 2026', servedAs: 'GET /v1/credit-limit/{buyer_nif}' },
  { method: 'GET', path: '/v1/sector-risk/{naics}', readiness: 'beta', servedAs: 'GET /v1/sector-risk/{naics}' },
  { method: 'POST', path: '/v1/bond/issue', readiness: 'roadmap, 2027', servedAs: 'POST /v1/bond/issue: 501 not_yet_available with roadmap_url until 2027', answersOnly: true },
];

const unserved = API_CATALOG.filter((e) => !e.servedAs).map((e) => ({
  ...e,
  re: new RegExp('^' + e.path.replace(/\{[^}]+\}/g, '[^/]+') + '/?$'),
}));

/** The catalog entry a request names that this deployment does not serve (any method), if any. */
export const unservedCatalogEntry = (path: string) => unserved.find((e) => e.re.test(path));
