import { money } from '../finance/money';
import { ApiError } from '../../lib/errors';
import { isRequestDate, isRfc3339DateTime } from '../../lib/schemas';

/** A buyer-limit request to a credit insurer, and its answer. */
export interface InsurerRequest {
  submission_id: string;
  buyer_nif: string;
  seller_nif: string | null;
  requested_limit_cents: number;
  currency: 'EUR';
  payment_terms_days: number;
  operation_type: string;
}
export interface InsurerAnswer {
  status: 'full' | 'partial' | 'refused' | 'pending';
  granted_limit_cents: number | null;
  insurer_reference: string;
  reasons: string[];
  valid_until: string | null;
}
export interface InsurerAdapter {
  name: string;
  /** `today` (YYYY-MM-DD): cover must run past it */
  submit(req: InsurerRequest, today: string): Promise<InsurerAnswer>;
}

/** What the sandbox simulator decides from: the buyer's credit decision for the request. */
export interface BuyerView {
  tier: string;
  limit_cents: number;
}

const THOUSAND_EUR = 100_000;
const floorThousand = (cents: number) => Math.floor(cents / THOUSAND_EUR) * THOUSAND_EUR;

/**
 * The sandbox insurer: deterministic, from the buyer's notched tier and credit limit. A and B:
 * the request in full when within the limit, else the limit (rounded down to €1,000); C: half of
 * that, partial; D and E, or a buyer with no limit: refused. Valid 12 months.
 */
export function simulateInsurer(req: InsurerRequest, buyer: BuyerView, today: string): InsurerAnswer {
  const grade = buyer.tier[0]!;
  // the whole id: its first 8 digits are a time (one value for ~65 s), which submissions shared
  const ref = `SBX-${req.submission_id.slice(4).replaceAll('-', '').toUpperCase()}`;
  const validUntil = `${Number(today.slice(0, 4)) + 1}${today.slice(4)}`;
  const refused = (why: string): InsurerAnswer => ({ status: 'refused', granted_limit_cents: 0, insurer_reference: ref, reasons: [why], valid_until: null });
  // the decision's own approval weighs the amount asked against its limit: the insurer looks at the tier and the limit
  if (grade === 'D' || grade === 'E' || buyer.limit_cents <= 0) return refused(`buyer risk too high (tier ${buyer.tier})`);
  const cap = grade === 'C' ? floorThousand(Math.min(req.requested_limit_cents, buyer.limit_cents) / 2) : floorThousand(buyer.limit_cents);
  if (req.requested_limit_cents <= cap) return { status: 'full', granted_limit_cents: req.requested_limit_cents, insurer_reference: ref, reasons: [], valid_until: validUntil };
  // (a tier C buyer's half of a small request rounds down to nothing: said as such, not as a full book)
  if (cap <= 0) return refused(grade === 'C' ? `tier ${buyer.tier}: half of the amount (${money(Math.floor(Math.min(req.requested_limit_cents, buyer.limit_cents) / 2), 'en')}), rounded down to whole thousands of euros, is nothing to cover` : 'no capacity on this buyer');
  return { status: 'partial', granted_limit_cents: cap, insurer_reference: ref, reasons: [grade === 'C' ? `tier ${buyer.tier}: half of the requested amount within the buyer's limit` : `limited to the buyer's credit limit`], valid_until: validUntil };
}

/** A real insurer over HTTP: POST {url}/buyer-limits, bearer token; outages become 503 upstream_unavailable. */
export function httpInsurer(cfg: { url: string; apiKey: string | null; name: string; timeoutMs: number }): InsurerAdapter {
  return {
    name: cfg.name,
    async submit(req, today) {
      const down = (why: string) => new ApiError('upstream_unavailable', `The credit insurer did not answer (${why}); nothing was submitted. Retry later.`, { headers: { 'retry-after': '30' } });
      let res: Response;
      try {
        res = await fetch(`${cfg.url}/buyer-limits`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
          body: JSON.stringify(req),
          signal: AbortSignal.timeout(cfg.timeoutMs),
        });
      } catch (err) {
        throw down((err as Error).name === 'TimeoutError' ? `no answer in ${cfg.timeoutMs} ms` : 'unreachable');
      }
      if (res.status >= 500 || res.status === 429) throw down(`HTTP ${res.status}`);
      const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
      const problem = res.ok ? unreadable(body, req, today) : `HTTP ${res.status}`;
      if (problem) throw down(`an answer it could not read: ${problem}`);
      const b = body as Record<string, unknown> & { status: InsurerAnswer['status'] };
      const reference = b.insurer_reference ?? b.reference;
      return {
        status: b.status,
        granted_limit_cents: b.status === 'full' || b.status === 'partial' ? (b.granted_limit_cents as number) : b.status === 'refused' ? 0 : null,
        insurer_reference: reference === undefined || reference === null ? '' : String(reference),
        reasons: Array.isArray(b.reasons) ? b.reasons.slice(0, 20).map(reasonText) : [],
        valid_until: typeof b.valid_until === 'string' ? b.valid_until.slice(0, 10) : null,
      };
    },
  };
}

/**
 * Why an insurer's answer cannot be taken as cover, or null: a grant above the request, negative or
 * not whole cents, `full` for less than asked, cover lapsing before tomorrow, a date that is not
 * one. Stored as it came, such an answer approved a decision the tenant's own limit declined.
 */
export function unreadable(body: Record<string, unknown> | null, req: InsurerRequest, today: string): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'not a JSON object';
  const { status, granted_limit_cents: granted, reasons } = body;
  const reference = body.insurer_reference ?? body.reference;
  // a date, or a date-time whose date counts
  const until = typeof body.valid_until === 'string' && isRfc3339DateTime(body.valid_until) ? body.valid_until.slice(0, 10) : body.valid_until;
  if (status !== 'full' && status !== 'partial' && status !== 'refused' && status !== 'pending') return 'status is not full, partial, refused or pending';
  const ref = typeof reference === 'number' && Number.isFinite(reference) ? String(reference) : reference;
  if (ref !== undefined && ref !== null && (typeof ref !== 'string' || ref.length > 100)) return 'the reference is not a text';
  if ((status === 'full' || status === 'partial') && (typeof ref !== 'string' || !ref.trim())) return 'cover without a reference';
  if (reasons !== undefined && reasons !== null && !Array.isArray(reasons)) return 'reasons are not a list';
  if (until !== undefined && until !== null && (typeof until !== 'string' || !isRequestDate(until))) return 'valid_until is not a date';
  if (status === 'full' || status === 'partial') {
    if (typeof granted !== 'number' || !Number.isSafeInteger(granted) || granted <= 0) return 'granted_limit_cents is not a positive whole number of cents';
    if (status === 'full' ? granted !== req.requested_limit_cents : granted >= req.requested_limit_cents) return `${status} cover of ${granted} cents for ${req.requested_limit_cents} asked`;
    if (typeof until !== 'string' || until <= today) return 'the cover has no valid_until after today';
  } else if (granted !== undefined && granted !== null && granted !== 0) return `${status} with a grant`;
  return null;
}

/** A reason as text: an insurer may send objects ({code, text}) where texts are expected. */
function reasonText(r: unknown): string {
  if (typeof r === 'string') return r;
  if (r && typeof r === 'object') {
    const o = r as Record<string, unknown>;
    for (const k of ['text', 'description', 'message', 'reason', 'code']) if (typeof o[k] === 'string') return o[k] as string;
  }
  return JSON.stringify(r).slice(0, 200);
}
