import { isValidNif } from './nif';
/** the Content-Type of every JSON answer of this API (successes, errors, idempotent replays) */
export const JSON_UTF8 = 'application/json;charset=utf-8';

/** every request body of this API is a JSON object */
export const isJsonObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
/** the field error of a body that is another JSON value, on every route */
export const NOT_AN_OBJECT: FieldError = { path: '(body)', message: 'must be a JSON object' };
export const notAnObject = () => validationError([NOT_AN_OBJECT]);

/**
 * The one error helper. Every error response is the §2.8 body:
 * {code, message, status, requestId, docsUrl?, fields?} (+ roadmap_url on live_tier_not_available).
 * ERROR_CATALOGUE feeds /docs/errors, the docsUrl of each body and the OpenAPI descriptions.
 */
export interface FieldError {
  path: string;
  message: string;
}

export const ERROR_CATALOGUE = {
  invalid_json: { status: 400, meaning: 'The request body is not valid JSON.' },
  invalid_request: { status: 400, meaning: 'OAuth token endpoint (RFC 6749 §5.2): a parameter is missing, repeated or malformed; see error_description.' },
  invalid_grant: { status: 400, meaning: 'OAuth token endpoint: the grant is not valid for this client.' },
  unauthorized_client: { status: 400, meaning: 'OAuth token endpoint: the client may not use this grant type.' },
  unsupported_grant_type: { status: 400, meaning: 'OAuth token endpoint: only grant_type=client_credentials is supported.' },
  invalid_scope: { status: 400, meaning: 'OAuth token endpoint: a requested scope is unknown or not granted to the client.' },
  invalid_client: { status: 401, meaning: 'OAuth token endpoint: the client is unknown, deleted, or its secret is wrong (HTTP Basic or client_secret_post).' },
  missing_api_key: { status: 401, meaning: 'No Authorization header, or it is not "Bearer <key>".' },
  invalid_api_key: { status: 401, meaning: 'The API key is unknown, malformed, or belongs to a terminated tenant.' },
  api_key_revoked: { status: 401, meaning: 'The API key was revoked.' },
  api_key_expired: { status: 401, meaning: 'The API key expired (for example at the end of a rotation grace period).' },
  access_token_expired: { status: 401, meaning: 'The OAuth access token expired: request a new one at /v1/oauth/token.' },
  access_token_revoked: { status: 401, meaning: 'The OAuth client of this access token was deleted: no new token will be issued to it either.' },
  tenant_suspended: { status: 403, meaning: 'The tenant is suspended; contact support.' },
  insufficient_scope: { status: 403, meaning: 'The API key lacks the scope this endpoint requires.' },
  cross_tenant_forbidden: { status: 403, meaning: 'The resource belongs to another tenant.' },
  sandbox_only: { status: 403, meaning: 'This endpoint exists only for sandbox (sk_test_) keys.' },
  cross_environment_forbidden: { status: 403, meaning: 'A key can only act on keys and data of its own environment (sandbox or live).' },
  live_key_required: { status: 403, meaning: 'Only a live (sk_live_) key may do this, because it affects both environments (erasing the tenant); nothing was changed.' },
  not_found: { status: 404, meaning: 'No such route.' },
  resource_not_found: { status: 404, meaning: 'The addressed resource does not exist for this tenant and environment.' },
  sector_not_found: { status: 404, meaning: 'The NAICS code is well formed but not in the sector table (docs/sector-risk.md lists it).' },
  company_not_found: { status: 404, meaning: 'No company with this NIF is known to the data sources (sandbox: not a fixture).' },
  method_not_allowed: { status: 405, meaning: 'The route exists but not with this HTTP method; see the Allow header.' },
  idempotency_key_in_use: { status: 409, meaning: 'A request with this Idempotency-Key is still being processed; retry later.' },
  last_active_key: { status: 409, meaning: 'Refused: this is the tenant\'s last active API key.' },
  key_not_active: { status: 409, meaning: 'The key is revoked or expired and cannot be rotated.' },
  too_many_active_keys: { status: 409, meaning: 'The tenant already holds the most active API keys (keys in their rotation grace count), or OAuth clients, allowed in this environment; revoke or delete one first.' },
  webhook_endpoint_inactive: { status: 409, meaning: 'The webhook endpoint is disabled or failed; re-enable it before sending to it.' },
  webhook_delivery_in_flight: { status: 409, meaning: 'An attempt of this webhook delivery is in flight; retry it after that attempt ends.' },
  invalid_transition: { status: 409, meaning: 'The operation (or payable) is not in a state this action applies to; see its status and the allowed transitions (docs/factoring.md).' },
  invoice_already_assigned: { status: 409, meaning: 'An invoice is already assigned in a live operation or programme (the first notified assignment prevails, Civil Code art. 584).' },
  already_exists: { status: 409, meaning: 'The resource already exists (e.g. a supplier already onboarded to the programme).' },
  limit_exceeded: { status: 409, meaning: 'The amount exceeds the limit available (a programme\'s limit, or a debtor\'s concentration limit).' },
  erp_not_connected: { status: 409, meaning: 'No active ERP connection for this provider and customer_reference; run the OAuth flow first.' },
  payload_too_large: { status: 413, meaning: 'The request body exceeds the size limit (1 MiB by default).' },
  not_acceptable: { status: 406, meaning: 'The Accept header names no representation this route answers (e.g. POST /v1/csrd/report: application/json or application/pdf).' },
  unsupported_media_type: { status: 415, meaning: 'Request bodies must be sent as Content-Type: application/json.' },
  validation_failed: { status: 422, meaning: 'One or more fields are invalid; see fields[] for each path and problem.' },
  invalid_nif: { status: 422, meaning: 'The NIF fails the mod-11 check digit (or is the sandbox fixture that always fails).' },
  image_unreadable: { status: 422, meaning: 'The image or PDF could not be decoded (not a PNG, JPEG or PDF, or damaged).' },
  qr_not_found: { status: 422, meaning: 'No QR code was found in the image or PDF.' },
  not_at_qr: { status: 422, meaning: 'The QR code found is not an AT invoice QR code (CODE:value fields A…S).' },
  invalid_iban: { status: 422, meaning: 'The IBAN fails its format or its check digits.' },
  unsupported_country: { status: 422, meaning: 'Only companies registered in Portugal (country PT) can be decided on.' },
  confirmation_required: { status: 422, meaning: 'Erasure needs confirmation set to exactly ERASE-MY-DATA.' },
  idempotency_key_reused: { status: 422, meaning: 'This Idempotency-Key was used with a different method, path or body.' },
  provider_not_available: { status: 422, meaning: 'The provider cannot be used with this environment (demo is sandbox-only).' },
  rate_limited: { status: 429, meaning: 'Per-key (or per-address) per-minute rate limit exceeded; see Retry-After.' },
  daily_quota_exceeded: { status: 429, meaning: 'The tenant\'s daily request quota is used up; see Retry-After.' },
  not_yet_available: { status: 501, meaning: 'The operation is in the API catalog with a future readiness (see roadmap_url); it is not available yet.' },
  internal_error: { status: 500, meaning: 'Unexpected failure. It is logged with the requestId; quote it to support.' },
  live_tier_not_available: { status: 503, meaning: 'Live scoring is not available yet (adapters not configured); see roadmap_url.' },
  oauth_credentials_not_configured: { status: 503, meaning: 'Live OAuth for this ERP provider is not configured yet.' },
  upstream_unavailable: { status: 503, meaning: 'A data source failed or timed out; nothing was billed or cached. Retry after Retry-After.' },
  insurer_not_configured: { status: 503, meaning: 'No credit insurer is configured for live submissions (INSURER_URL); the sandbox simulates one.' },
  service_unavailable: { status: 503, meaning: 'A dependency (database or Redis) is unreachable.' },
  service_busy: { status: 503, meaning: 'The service is at capacity for this work (reading images and PDFs): every reader is busy and the queue is full, or the reading stopped or ran past its time limit. Nothing was billed; retry after Retry-After.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: { fields?: FieldError[]; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
  ) {
    super(message ?? ERROR_CATALOGUE[code].meaning);
    this.status = ERROR_CATALOGUE[code].status;
  }
}

/** The message of a field that fails the NIF check digit: what fieldProblems counts as such. */
export const NIF_CHECK_DIGIT_FAILS = 'fails the NIF check digit';
/** an unknown field: ignored when the rest is valid (Elysia strips it), listed beside real problems (it may be a misspelt one) */
export const IGNORED_FIELD = 'is not a field of this request (ignored)';
/**
 * the top-level fields of `body` that are not among `known` (a schema's properties), as
 * ignored-field problems (at most 50); own properties only (`in` finds every object's `constructor`)
 */
export const unknownFields = (body: unknown, known: Record<string, unknown>): FieldError[] =>
  isJsonObject(body) ? Object.keys(body).filter((k) => !Object.hasOwn(known, k)).slice(0, 50).map((path) => ({ path, message: IGNORED_FIELD })) : [];
/** The given NIFs (path → value, absent ones skipped) that fail their check digit, as field problems. */
export const nifProblems = (nifs: Record<string, string | undefined>): FieldError[] =>
  Object.entries(nifs).flatMap(([path, nif]) => (nif !== undefined && !isValidNif(nif) ? [{ path, message: NIF_CHECK_DIGIT_FAILS }] : []));

/**
 * Every problem of a request at once (422): invalid_nif when each one is a NIF failing its check
 * digit, as a route with a single NIF answers it; otherwise validation_failed, listing them all.
 */
export function fieldProblems(fields: FieldError[], message?: string): ApiError {
  if (fields.every((f) => f.message === NIF_CHECK_DIGIT_FAILS)) return new ApiError('invalid_nif', `${fields.length === 1 ? 'The NIF fails' : 'NIFs fail'} the mod-11 check digit; see fields.`, { fields });
  return validationError(fields, message);
}

/** 422 invalid_nif on one field whose NIF fails its check digit. */
export const nifCheckFails = (path: string) => fieldProblems([{ path, message: NIF_CHECK_DIGIT_FAILS }]);

/** The same error with a field's path renamed: a check shared by routes that name the field otherwise. */
export function withFieldPath(err: unknown, from: string, to: string): unknown {
  if (!(err instanceof ApiError) || !err.extra.fields?.some((f) => f.path === from)) return err;
  return new ApiError(err.code, err.message, { ...err.extra, fields: err.extra.fields.map((f) => (f.path === from ? { ...f, path: to } : f)) });
}

/**
 * An error about one item of a request (a debtor, an exposure, an anchor), said of that item: its
 * message prefixed, its field named, and its headers and body extras kept (Retry-After of an
 * upstream failure, roadmap_url of the live tier).
 */
export function aboutField(err: ApiError, path: string, prefix: string): ApiError {
  return new ApiError(err.code, `${prefix}: ${err.message}`, { ...err.extra, fields: [{ path, message: err.message }] });
}

/**
 * Whether a path parameter names one of the tenant's resources: `id` or `…_id` (`run_id`,
 * `operation_id`, `delivery_id`), unless its values are listed (an enumeration). A malformed value
 * of one is answered as an unknown one (`unknownResource`), 404 `resource_not_found`, never 422:
 * what exists is not told apart from what could not, whatever its form (docs/decisions.md). Other
 * path parameters (`provider`, `action`, a NIF, a NAICS code) are checked as any field (422 on `path.<name>`).
 */
export function isResourceIdParam(name: string, schema?: { anyOf?: unknown[]; enum?: unknown[]; const?: unknown }): boolean {
  if (name !== 'id' && !name.endsWith('_id')) return false;
  return !(schema && (Array.isArray(schema.enum) || 'const' in schema || (Array.isArray(schema.anyOf) && schema.anyOf.every((o) => o !== null && typeof o === 'object' && 'const' in o))));
}

/** 404 resource_not_found for a resource id that cannot exist (malformed): the body an unknown one gets, without fields. */
export function unknownResource(value: unknown): ApiError {
  const text = typeof value === 'string' ? value : String(value ?? '');
  const shown = text.length > 64 ? `${text.slice(0, 64)}…` : text;
  return new ApiError('resource_not_found', `No resource ${shown} for this tenant in this environment.`);
}

export const validationError = (fields: FieldError[], message = 'The request is invalid.') =>
  new ApiError('validation_failed', message, { fields });

export function errorBody(err: ApiError, requestId: string, docsBase: string) {
  return {
    code: err.code,
    message: err.message,
    status: err.status,
    requestId,
    docsUrl: `${docsBase}/docs/errors#${err.code}`,
    ...(err.extra.fields?.length ? { fields: err.extra.fields } : {}),
    ...err.extra.body,
  };
}

/** every item whose id an earlier item of the same list has, named with that item */
export function repeatedIds(list: string, items: { id?: string | undefined }[]): FieldError[] {
  const first = new Map<string, number>();
  const out: FieldError[] = [];
  items.forEach((item, i) => {
    if (item.id === undefined) return;
    const at = first.get(item.id);
    if (at === undefined) first.set(item.id, i);
    else if (out.length < 50) out.push({ path: `${list}.${i}.id`, message: `repeats ${list}.${at}` });
  });
  return out;
}
