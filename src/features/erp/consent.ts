/**
 * The HTML pages of the OAuth flow: the sandbox consent page (this service plays the provider,
 * so the whole flow runs with no outside party) and the error page of the callback. Both are
 * served without a bearer key; the `state` authenticates them. The consent page decides through
 * a POST form carrying a CSRF token (see OAuthService.consent / decide), never through GET links.
 */
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
};

function page(title: string, body: string, status: number, extraHeaders: Record<string, string> = {}): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}.box{border:1px solid #ddd;border-radius:.5rem;padding:1.5rem}.actions{display:flex;gap:1rem;margin-top:1.5rem}button{font:inherit;cursor:pointer;padding:.6rem 1.2rem;border-radius:.4rem;border:1px solid #888;background:#fff;color:#222}button.approve{background:#1a7f37;border-color:#1a7f37;color:#fff}small{color:#666}code{background:#f3f3f3;padding:0 .25rem}</style></head><body><div class="box">${body}</div></body></html>`;
  return new Response(html, { status, headers: { ...HTML_HEADERS, ...extraHeaders } });
}

export const PROVIDER_LABELS: Record<string, string> = {
  toconline: 'TOConline',
  primavera: 'Primavera',
  phc: 'PHC',
  sage: 'Sage',
  moloni: 'Moloni',
  invoicexpress: 'InvoiceXpress',
  demo: 'Demo ERP',
};

/**
 * Approve / Deny are the two submit buttons of one POST form (same origin) carrying the state and
 * the CSRF token; `cookie` is the Set-Cookie value the token is bound to. The form may only post
 * here and the redirect that answers it may only go to return_url's origin (CSP form-action).
 */
export function consentPage(p: {
  provider: string;
  customerReference: string;
  action: string;
  state: string;
  csrfToken: string;
  cookie: string;
  returnOrigin: string;
  expiresAt: Date;
}): Response {
  const label = PROVIDER_LABELS[p.provider] ?? p.provider;
  const csp = HTML_HEADERS['content-security-policy'].replace("form-action 'self'", `form-action 'self' ${p.returnOrigin}`);
  return page(
    `Sandbox: connect ${label}`,
    `<h1>Connect ${esc(label)}</h1>
<p>Sandbox consent page. In production the customer sees ${esc(label)}'s own page here.</p>
<p>Allow read access to the invoices and bank transactions of <strong>${esc(p.customerReference)}</strong>?</p>
<form method="post" action="${esc(p.action)}" id="consent"><input type="hidden" name="state" value="${esc(p.state)}"><input type="hidden" name="csrf_token" value="${esc(p.csrfToken)}">
<div class="actions"><button type="submit" class="approve" id="approve" name="decision" value="approve">Approve</button><button type="submit" class="deny" id="deny" name="decision" value="deny">Deny</button></div></form>
<p><small>This request expires at <code>${esc(p.expiresAt.toISOString())}</code>. No real ERP is contacted in the sandbox.</small></p>`,
    200,
    { 'content-security-policy': csp, 'set-cookie': p.cookie },
  );
}

export function errorPage(status: number, title: string, message: string): Response {
  return page(title, `<h1>${esc(title)}</h1><p>${esc(message)}</p><p><small>Start the connection again from the application that sent you here.</small></p>`, status);
}
