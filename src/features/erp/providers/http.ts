import type { ApiSession } from './types';

export interface HttpOptions {
  timeoutMs: number;
  /** attempts per request for 429 / 5xx / network errors */
  maxAttempts: number;
  /** first back-off; doubled each attempt, with jitter */
  baseDelayMs: number;
  /** cap on any single wait, Retry-After included */
  maxWaitMs: number;
}

/** Run error codes a provider call can end with (sync_runs.error_code). */
export type UpstreamCode = 'relink_required' | 'erp_not_connected' | 'upstream_unavailable' | 'upstream_rejected';

export class UpstreamError extends Error {
  constructor(
    readonly code: UpstreamCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The provider refused a grant (authorization code or refresh token): the customer must link again. */
export class OAuthRejected extends Error {}

const sleep = (ms: number) => (ms > 0 ? Bun.sleep(ms) : Promise.resolve());

/** Retry-After as seconds or an HTTP date → milliseconds (null when absent or unreadable). */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** Never put tokens or secrets in messages: keep only origin and path of a URL. */
export const redactUrl = (url: string) => {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(url)';
  }
};

/**
 * fetch with a timeout and bounded retries: 429 and 5xx (and network errors / timeouts) are
 * retried with exponential back-off, honouring Retry-After up to `maxWaitMs`. Other statuses
 * (2xx, 4xx incl. 401) are returned to the caller.
 */
export async function fetchWithRetry(build: () => Request, opts: HttpOptions): Promise<Response> {
  let lastError = '';
  for (let attempt = 1; attempt <= opts.maxAttempts; attempt++) {
    const req = build();
    let res: Response | null = null;
    try {
      res = await fetch(req, { signal: AbortSignal.timeout(opts.timeoutMs), redirect: 'manual' });
    } catch (err) {
      lastError = `${redactUrl(req.url)}: ${(err as Error).name === 'TimeoutError' ? 'timed out' : 'network error'}`;
    }
    if (res && res.status !== 429 && res.status < 500) return res;
    let wait = opts.baseDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
    if (res) {
      lastError = `${redactUrl(req.url)} answered ${res.status}`;
      const ra = retryAfterMs(res.headers.get('retry-after'));
      if (ra !== null) wait = ra;
      await res.body?.cancel().catch(() => {});
    }
    if (attempt < opts.maxAttempts) await sleep(Math.min(wait, opts.maxWaitMs));
  }
  throw new UpstreamError('upstream_unavailable', `provider unavailable after ${opts.maxAttempts} attempts (${lastError})`);
}

/**
 * An API call with the connection's access token: the token is checked (and refreshed when
 * about to expire) before the call; a 401 forces one refresh and one retry; a second 401 means
 * the customer must link again.
 */
export async function authedFetch(
  session: ApiSession,
  build: (token: string) => Request,
  opts: HttpOptions,
  isUnauthorized: (res: Response) => Promise<boolean> = async (res) => res.status === 401,
): Promise<Response> {
  let token = await session.accessToken();
  let res = await fetchWithRetry(() => build(token), opts);
  if (await isUnauthorized(res)) {
    await res.body?.cancel().catch(() => {});
    token = await session.forceRefresh(token);
    res = await fetchWithRetry(() => build(token), opts);
    if (await isUnauthorized(res)) {
      await res.body?.cancel().catch(() => {});
      throw new UpstreamError('relink_required', 'the provider rejected the access token after a refresh', 401);
    }
  }
  return res;
}

/** JSON body of a 2xx; anything else is an upstream rejection (after the retries above). */
export async function expectJson(res: Response, what: string): Promise<unknown> {
  if (res.status < 200 || res.status >= 300) {
    await res.body?.cancel().catch(() => {});
    throw new UpstreamError('upstream_rejected', `${what}: the provider answered ${res.status}`, res.status);
  }
  try {
    return await res.json();
  } catch {
    throw new UpstreamError('upstream_rejected', `${what}: the provider sent a body that is not JSON`, res.status);
  }
}

/** Token endpoint answer → TokenSet; 4xx → OAuthRejected (a refused code / refresh token). */
export async function readTokenResponse(res: Response): Promise<{ accessToken: string; refreshToken: string | null; expiresIn: number | null }> {
  if (res.status >= 400 && res.status < 500) {
    await res.body?.cancel().catch(() => {});
    throw new OAuthRejected(`token endpoint refused the grant (${res.status})`);
  }
  const body = (await expectJson(res, 'token endpoint')) as Record<string, unknown>;
  if (typeof body.error === 'string') throw new OAuthRejected(`token endpoint refused the grant (${body.error})`);
  if (typeof body.access_token !== 'string' || !body.access_token) throw new UpstreamError('upstream_rejected', 'token endpoint answered without access_token');
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : null,
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null,
  };
}
