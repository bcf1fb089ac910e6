import { ApiError } from '../../lib/errors';

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
  submit(req: InsurerRequest): Promise<InsurerAnswer>;
}

/** What the sandbox simulator decides from: the buyer's credit decision for the request. */
export interface BuyerView {
  tier: string;
  limit_cents: number;
  approved: boolean;
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
  if (cap <= 0) return refused('no capacity on this buyer');
  return { status: 'partial', granted_limit_cents: cap, insurer_reference: ref, reasons: [grade === 'C' ? `tier ${buyer.tier}: half of the requested amount within the buyer's limit` : `limited to the buyer's credit limit`], valid_until: validUntil };
}

/** A real insurer over HTTP: POST {url}/buyer-limits, bearer token; outages become 503 upstream_unavailable. */
export function httpInsurer(cfg: { url: string; apiKey: string | null; name: string; timeoutMs: number }): InsurerAdapter {
  return {
    name: cfg.name,
    async submit(req) {
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
      const body = (await res.json().catch(() => null)) as Partial<InsurerAnswer> & { reference?: string } | null;
      const status = body?.status;
      if (!res.ok || !body || !status || !['full', 'partial', 'refused', 'pending'].includes(status)) throw down(`an answer it could not read (HTTP ${res.status})`);
      return {
        status,
        granted_limit_cents: typeof body.granted_limit_cents === 'number' ? Math.round(body.granted_limit_cents) : null,
        insurer_reference: String(body.insurer_reference ?? body.reference ?? ''),
        reasons: Array.isArray(body.reasons) ? body.reasons.map(String).slice(0, 20) : [],
        valid_until: typeof body.valid_until === 'string' ? body.valid_until : null,
      };
    },
  };
}
