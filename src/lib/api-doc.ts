import { ERROR_CATALOGUE, type ErrorCode } from './errors';

/**
 * Route documentation in one place: summary, tag, security scheme and the error codes a route can
 * answer with. The OpenAPI builder turns `x-errors` into error responses (grouped by status, each
 * with the §2.8 schema); the auth errors of secured routes and the body errors of POSTs are added
 * automatically.
 */
export type SecurityScheme = 'BearerAuth' | 'bearerAuth' | null;

/**
 * A feature's route documentation: its tag and security scheme once, then per route the summary,
 * operation id, error codes, description, body examples and any other apiDoc option.
 */
export function routeDocs(tag: string, security: SecurityScheme = 'BearerAuth') {
  type Opts = Parameters<typeof apiDoc>[0];
  return (summary: string, operationId: string, errors: Opts['errors'] = [], description?: string, examples?: Opts['examples'], more: Omit<Partial<Opts>, 'summary' | 'tag' | 'security' | 'operationId'> = {}) =>
    apiDoc({ summary, tag, security, operationId, errors, ...(description ? { description } : {}), ...(examples ? { examples } : {}), ...more });
}

export function apiDoc(opts: {
  summary: string;
  tag: string;
  security: SecurityScheme;
  errors?: ErrorCode[];
  description?: string;
  operationId?: string;
  /** outcomes that are not JSON (redirects, HTML pages): documented as given, instead of the generated success and query-validation responses */
  responses?: Record<string, { description: string; html?: true; location?: true }>;
  /** answers in English or Portuguese by Accept-Language (Content-Language and Vary on success) */
  /** answers in pt or en by Accept-Language: true (English by default), or the header's own description */
  localised?: true | string;
  /** a browser form target: its body as application/x-www-form-urlencoded (no JSON body errors, no Idempotency-Key) */
  formBody?: Record<string, unknown>;
  /** named request body examples (OpenAPI `examples` of the JSON body) */
  examples?: Record<string, { summary: string; value: unknown }>;
  /** a route taking JSON or a file (plugins/http-errors BINARY_BODIES): the JSON schema and the file types */
  binaryBody?: { json?: unknown; types: string[]; maxBytes: number; formFields?: Record<string, unknown>; fileExamples?: Record<string, Record<string, { summary: string; value: string }>> };
  /** other media types the success answers in (by Accept): media type → description; documented as binary content of each 2xx */
  alsoAnswers?: Record<string, string>;
  /** a 201/202 that names what it created in Location: what that is */
  created?: string;
  /** optional request headers the route reads (name → description), documented as header parameters */
  headerParams?: Record<string, string>;
}) {
  return {
    ...(opts.headerParams ? { 'x-header-params': opts.headerParams } : {}),
    ...(opts.formBody ? { 'x-form-body': opts.formBody } : {}),
    ...(opts.examples ? { 'x-examples': opts.examples } : {}),
    ...(opts.binaryBody ? { 'x-binary-body': opts.binaryBody } : {}),
    ...(opts.responses ? { 'x-responses': opts.responses } : {}),
    ...(opts.localised ? { 'x-localised': opts.localised } : {}),
    ...(opts.alsoAnswers ? { 'x-also-answers': opts.alsoAnswers } : {}),
    ...(opts.created ? { 'x-created': opts.created } : {}),
    summary: opts.summary,
    tags: [opts.tag],
    ...(opts.description ? { description: opts.description } : {}),
    ...(opts.operationId ? { operationId: opts.operationId } : {}),
    // an API key, or an OAuth access token (client credentials) with the same scopes
    ...(opts.security ? { security: [{ [opts.security]: [] }, { oauth2: [] }] } : { security: [] }),
    'x-errors': opts.errors ?? [],
  } as Record<string, unknown>;
}

export const AUTH_ERRORS: ErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'api_key_revoked',
  'api_key_expired',
  'access_token_expired',
  'access_token_revoked',
  'tenant_suspended',
  'insufficient_scope',
  'rate_limited',
  'daily_quota_exceeded',
];
export const BODY_ERRORS: ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type', 'validation_failed'];
export const IDEMPOTENCY_ERRORS: ErrorCode[] = ['idempotency_key_in_use', 'idempotency_key_reused'];

export function groupByStatus(codes: ErrorCode[]): Map<number, ErrorCode[]> {
  const m = new Map<number, ErrorCode[]>();
  for (const c of new Set(codes)) {
    const s = ERROR_CATALOGUE[c].status;
    m.set(s, [...(m.get(s) ?? []), c]);
  }
  return new Map([...m.entries()].sort((a, b) => a[0] - b[0]));
}
