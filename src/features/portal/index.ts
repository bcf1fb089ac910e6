import { eq } from 'drizzle-orm';
import { publicBaseUrl } from '../../config';
import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import { authed, limitAnonymous } from '../../plugins/auth';
import { readCapped } from '../../plugins/http-errors';
import { apiDoc } from '../../lib/api-doc';
import { safeEqual } from '../../lib/crypto';
import { ApiError } from '../../lib/errors';
import { Nif } from '../../lib/schemas';
import type { ConfirmingService } from '../confirming/service';
import type { PayableStatus } from '../confirming/states';
import { money } from '../finance/money';
import type { Env } from '../tenants/service';

/**
 * The supplier portal of a confirming programme: a signed, short-lived, single-supplier link to an
 * HTML page the tenant embeds in an iframe (frame-ancestors from the programme). The link is the
 * capability (HMAC over programme, supplier, tenant, environment and expiry, with a key derived from
 * the service's encryption key); the accept form carries a token derived from it, so no cookie is
 * needed inside a third-party iframe. No scripts, no outside assets.
 */
type ServerLike = Parameters<typeof limitAnonymous>[2];
type Lang = 'pt-PT' | 'en';
interface Claims {
  p: string;
  s: string;
  t: string;
  e: Env;
  x: number;
}

/**
 * A payable's status as the supplier sees it: an approved one past its offer's last day is paid at
 * maturity; one paid early stays paid whatever the anchor does after (only a funded payable can be
 * defaulted or written off: that is between the bank and the anchor, not the supplier's business)
 */
type ShownStatus = Exclude<PayableStatus, 'defaulted' | 'written_off'> | 'at_maturity';
const shownStatus = (status: string, acceptable: boolean): ShownStatus =>
  status === 'approved' && !acceptable ? 'at_maturity' : status === 'defaulted' || status === 'written_off' ? 'funded' : (status as ShownStatus);

const TEXT = {
  'pt-PT': {
    title: 'Pagamentos antecipados',
    intro: (anchor: string) => `Faturas aprovadas por ${anchor}. Pode receber já o valor líquido de cada fatura, em vez de esperar pelo vencimento.`,
    caption: 'Faturas aprovadas e propostas de pagamento antecipado',
    cols: ['Fatura', 'Vencimento', 'Valor', 'Desconto', 'Valor líquido', 'Estado', 'Ação'],
    accept: 'Aceitar',
    acceptLabel: (n: string, net: string) => `Aceitar o pagamento antecipado da fatura ${n} por ${net}`,
    status: { approved: 'Proposta', accepted: 'Aceite', funded: 'Paga', settled: 'Liquidada', cancelled: 'Cancelada', at_maturity: 'A pagar no vencimento' } satisfies Record<ShownStatus, string> as Record<string, string>,
    none: 'Não há faturas aprovadas de momento.',
    done: (n: string) => `Aceitou o pagamento antecipado da fatura ${n}. O banco fará a transferência.`,
    errorTitle: 'Ligação inválida',
    unavailableTitle: 'Programa indisponível',
    expired: 'Esta ligação expirou. Peça uma nova ao seu cliente.',
    tampered: 'Esta ligação não é válida.',
    gone: 'Este programa ou fornecedor já não existe.',
    unavailable: 'Este programa não está disponível de momento. Contacte o seu cliente.',
    failed: 'Não foi possível aceitar esta proposta',
    notOffered: (n: string, status: string, due: string) => `A fatura ${n} (vencimento ${due}) já não tem proposta de pagamento antecipado: está ${status.toLowerCase()}.`,
    lang: 'English',
  },
  en: {
    title: 'Early payments',
    intro: (anchor: string) => `Invoices approved by ${anchor}. You can be paid the net amount of each invoice now instead of waiting for its due date.`,
    caption: 'Approved invoices and early-payment offers',
    cols: ['Invoice', 'Due date', 'Amount', 'Discount', 'Net amount', 'Status', 'Action'],
    accept: 'Accept',
    acceptLabel: (n: string, net: string) => `Accept early payment of invoice ${n} for ${net}`,
    status: { approved: 'Offered', accepted: 'Accepted', funded: 'Paid', settled: 'Settled', cancelled: 'Cancelled', at_maturity: 'Paid at maturity' } satisfies Record<ShownStatus, string> as Record<string, string>,
    none: 'There are no approved invoices at the moment.',
    done: (n: string) => `You accepted early payment of invoice ${n}. The bank will make the transfer.`,
    errorTitle: 'Invalid link',
    unavailableTitle: 'Programme unavailable',
    expired: 'This link has expired. Ask your customer for a new one.',
    tampered: 'This link is not valid.',
    gone: 'This programme or supplier no longer exists.',
    unavailable: 'This programme is not available at the moment. Contact your customer.',
    failed: 'This offer could not be accepted',
    notOffered: (n: string, status: string, due: string) => `Invoice ${n} (due ${due}) no longer has an early-payment offer: it is ${status.toLowerCase()}.`,
    lang: 'Português',
  },
} as const;

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const langOf = (q: string | undefined, accept: string | undefined): Lang => (q === 'en' || q === 'pt-PT' ? q : /^\s*en\b/i.test(accept ?? '') ? 'en' : 'pt-PT');

const STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff;margin:0;padding:1.5rem}
main{max-width:60rem;margin:0 auto}h1{font-size:1.5rem;margin:0 0 .5rem}table{border-collapse:collapse;width:100%;margin:1rem 0}
caption{text-align:left;font-weight:600;padding:.5rem 0}th,td{border-bottom:1px solid #c8c8c8;padding:.5rem;text-align:left}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
button{font:inherit;background:#0b5394;color:#fff;border:0;border-radius:4px;padding:.4rem 1rem;cursor:pointer}button:hover{background:#073763}
button:focus-visible,a:focus-visible{outline:3px solid #f1a208;outline-offset:2px}a{color:#0b5394}.ok{background:#e6f4ea;border-left:4px solid #1e7b34;padding:.75rem}
.err{background:#fdecea;border-left:4px solid #b3261e;padding:.75rem}nav{text-align:right}`;

function page(lang: Lang, title: string, body: string) {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export function portalRoutes(ctx: AppContext, confirming: ConfirmingService) {
  const base = publicBaseUrl(ctx.config);
  const sign = (c: Claims) => {
    const payload = Buffer.from(JSON.stringify(c)).toString('base64url');
    return `${payload}.${ctx.secretBox.mac('supplier-portal', payload)}`;
  };
  const csrfOf = (token: string, payableId: string) => ctx.secretBox.mac('supplier-portal-form', `${token}|${payableId}`);
  const verify = (token: string | undefined): Claims | 'tampered' | 'expired' => {
    const [payload, mac] = (token ?? '').split('.');
    if (!payload || !mac || !safeEqual(mac, ctx.secretBox.mac('supplier-portal', payload))) return 'tampered';
    let c: Claims;
    try {
      c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
    } catch {
      return 'tampered';
    }
    return c.x < ctx.clock.now().getTime() ? 'expired' : c;
  };
  /**
   * A verified link whose tenant is active: a suspended or erased tenant's links stop at once, as
   * its keys do (the link is the tenant's capability, lent to its supplier for 15 minutes).
   */
  const admitLink = async (token: string | undefined) => {
    const claims = verify(token);
    if (typeof claims === 'string') return claims;
    const tenants = ctx.database.t.tenants;
    const [tenant] = await ctx.database.db.select({ status: tenants.status }).from(tenants).where(eq(tenants.id, claims.t));
    return tenant?.status === 'active' ? claims : ('unavailable' as const);
  };
  const html = (status: number, text: string, frameAncestors: string[], set: { status?: number | string; headers: Record<string, unknown> }) => {
    set.status = status;
    return new Response(text, {
      status,
      headers: {
        ...(set.headers as Record<string, string>),
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
        'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors ${frameAncestors.length ? frameAncestors.join(' ') : "'none'"}`,
      },
    });
  };
  // a suspended or erased tenant's link is not a bad link: the supplier is told the programme is unavailable
  const errorPage = (lang: Lang, status: number, message: string, set: { headers: Record<string, unknown> }) => {
    const title = message === TEXT[lang].unavailable ? TEXT[lang].unavailableTitle : TEXT[lang].errorTitle;
    return html(status, page(lang, title, `<h1>${esc(title)}</h1><p class="err" role="alert">${esc(message)}</p>`), [], set);
  };

  /** The page for a verified link: the supplier's payables, with an accept form on each offer. */
  async function render(claims: Claims, token: string, lang: Lang, set: { headers: Record<string, unknown> }, notice: string | null, status = 200) {
    const T = TEXT[lang];
    const caller = { tenantId: claims.t, env: claims.e };
    let programme;
    try {
      programme = await confirming.getProgramme(caller, claims.p);
    } catch {
      return errorPage(lang, 404, T.gone, set);
    }
    const supplier = await confirming.supplier(caller, claims.p, claims.s);
    if (!supplier) return errorPage(lang, 404, T.gone, set);
    const payables = (await confirming.listPayables(caller, claims.p, { supplier_nif: claims.s, limit: 200 })).data;
    const rows = payables
      .map((p) => {
        const offer = p.offer ?? p.accepted_offer;
        const net = offer ? money(offer.net_cents, lang) : '—';
        const shown = shownStatus(p.status, p.allowed_actions.includes('accept'));
        const action =
          p.allowed_actions.includes('accept')
            ? `<form method="post" action="/portal/confirming/accept"><input type="hidden" name="token" value="${esc(token)}"><input type="hidden" name="payable_id" value="${esc(p.payable_id)}"><input type="hidden" name="csrf" value="${esc(csrfOf(token, p.payable_id))}"><input type="hidden" name="lang" value="${lang}"><button type="submit" aria-label="${esc(T.acceptLabel(p.number, net))}">${esc(T.accept)}</button></form>`
            : '';
        return `<tr id="${esc(p.payable_id)}"><th scope="row">${esc(p.number)}</th><td>${esc(p.due_date)}</td><td class="n">${esc(money(p.amount_cents, lang))}</td><td class="n">${offer ? esc(money(offer.discount_cents, lang)) : '—'}</td><td class="n">${esc(net)}</td><td data-status="${shown}">${esc(T.status[shown] ?? shown)}</td><td>${action}</td></tr>`;
      })
      .join('');
    const other: Lang = lang === 'en' ? 'pt-PT' : 'en';
    const body = `<nav><a href="/portal/confirming?token=${encodeURIComponent(token)}&amp;lang=${other}" lang="${other}">${esc(T.lang)}</a></nav>
<h1>${esc(T.title)}</h1><p>${esc(supplier.name)} — NIF ${esc(claims.s)}</p><p>${esc(T.intro(programme.anchor_name ?? programme.anchor_nif))}</p>
${notice ? `<p class="${status === 200 ? 'ok' : 'err'}" role="status">${esc(notice)}</p>` : ''}
${payables.length ? `<table><caption>${esc(T.caption)}</caption><thead><tr>${T.cols.map((c, i) => `<th scope="col"${i >= 2 && i <= 4 ? ' class="n"' : ''}>${esc(c)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>` : `<p>${esc(T.none)}</p>`}`;
    return html(status, page(lang, T.title, body), programme.frame_ancestors, set);
  }

  const embed = new Elysia({ name: 'supplier-portal-embed' }).use(authed(ctx, 'finance')).get(
    '/v1/supplier-portal/embed',
    async ({ auth, query }) => {
      await confirming.programmeRow(auth, query.programme_id);
      if (!(await confirming.supplier(auth, query.programme_id, query.supplier_nif)))
        throw new ApiError('resource_not_found', `Supplier ${query.supplier_nif} is not in programme ${query.programme_id}.`, { fields: [{ path: 'query.supplier_nif', message: 'not onboarded to this programme' }] });
      const expires = ctx.clock.now().getTime() + ctx.config.portalLinkTtlSeconds * 1000;
      const token = sign({ p: query.programme_id, s: query.supplier_nif, t: auth.tenantId, e: auth.env, x: expires });
      return { url: `${base}/portal/confirming?token=${encodeURIComponent(token)}&lang=${query.lang ?? 'pt-PT'}`, expires_at: new Date(expires).toISOString() };
    },
    {
      query: t.Object({ programme_id: t.String({ pattern: '^cfp_[0-9a-f-]{36}$' }), supplier_nif: Nif, lang: t.Optional(t.Union([t.Literal('pt-PT'), t.Literal('en')], { default: 'pt-PT' })) }),
      response: { 200: t.Object({ url: t.String({ description: 'Signed, single-supplier, valid PORTAL_LINK_TTL_SECONDS (15 minutes): put it in an iframe on an origin listed in the programme\u2019s frame_ancestors' }), expires_at: t.String({ format: 'date-time' }) }) },
      detail: apiDoc({
        summary: 'A signed, short-lived link to the supplier portal page of one supplier of a programme',
        description: 'The page (pt-PT or en, no scripts, no outside assets) lists the supplier\u2019s approved payables with the early-payment offers (discount and net amount) and accepts an offer with a form. It may be framed only by the programme\u2019s frame_ancestors (Content-Security-Policy). An expired or altered link shows an error page. docs/confirming.md.',
        tag: 'finance',
        security: 'BearerAuth',
        operationId: 'supplierPortalEmbed',
        errors: ['resource_not_found'],
      }),
    },
  );

  const pages = new Elysia({ name: 'supplier-portal' })
    .get(
      '/portal/confirming',
      async ({ query, headers, request, server, set }) => {
        const over = await limitAnonymous(ctx, request, server as ServerLike, set);
        if (over) throw over;
        const lang = langOf(query.lang, headers['accept-language']);
        const claims = await admitLink(query.token);
        if (claims === 'tampered') return errorPage(lang, 403, TEXT[lang].tampered, set);
        if (claims === 'expired') return errorPage(lang, 410, TEXT[lang].expired, set);
        if (claims === 'unavailable') return errorPage(lang, 403, TEXT[lang].unavailable, set);
        const done = query.accepted ? (await confirming.listPayables({ tenantId: claims.t, env: claims.e }, claims.p, { supplier_nif: claims.s, limit: 200 })).data.find((p) => p.payable_id === query.accepted) : undefined;
        return render(claims, query.token!, lang, set, done ? TEXT[lang].done(done.number) : null);
      },
      { query: t.Object({ token: t.Optional(t.String({ maxLength: 2000 })), lang: t.Optional(t.String({ maxLength: 8 })), accepted: t.Optional(t.String({ maxLength: 64 })) }), detail: { hide: true } },
    )
    .post(
      '/portal/confirming/accept',
      async ({ request, headers, server, set }) => {
        const over = await limitAnonymous(ctx, request, server as ServerLike, set);
        if (over) throw over;
        const text = /^application\/x-www-form-urlencoded\b/i.test(headers['content-type'] ?? '') ? await readCapped(request, 8192) : null;
        const form = new URLSearchParams(text ?? '');
        const lang = langOf(form.get('lang') ?? undefined, headers['accept-language']);
        const token = form.get('token') ?? '';
        const claims = await admitLink(token);
        if (claims === 'tampered') return errorPage(lang, 403, TEXT[lang].tampered, set);
        if (claims === 'expired') return errorPage(lang, 410, TEXT[lang].expired, set);
        if (claims === 'unavailable') return errorPage(lang, 403, TEXT[lang].unavailable, set);
        const payableId = form.get('payable_id') ?? '';
        if (!/^cpy_[0-9a-f-]{36}$/.test(payableId) || !safeEqual(form.get('csrf') ?? '', csrfOf(token, payableId))) return errorPage(lang, 403, TEXT[lang].tampered, set);
        const caller = { tenantId: claims.t, env: claims.e, keyId: null, requestId: null };
        try {
          const p = await confirming.payableRow(caller, payableId);
          if (p.programmeId !== claims.p || p.supplierNif !== claims.s) return errorPage(lang, 403, TEXT[lang].tampered, set);
          try {
            await confirming.transition(caller, payableId, 'accept', { by: 'portal' });
          } catch (err) {
            // the supplier is told, in the page's language, what became of the invoice (the API's
            // message names back-office actions and ids)
            if (!(err instanceof ApiError) || err.code !== 'invalid_transition') throw err;
            const now = await confirming.payableRow(caller, payableId);
            const T = TEXT[lang];
            return render(claims, token, lang, set, `${T.failed}. ${T.notOffered(now.number, T.status[shownStatus(now.status, false)] ?? now.status, now.dueDate)}`, err.status);
          }
        } catch (err) {
          if (err instanceof ApiError) return render(claims, token, lang, set, TEXT[lang].failed, err.status);
          throw err;
        }
        set.status = 303;
        set.headers.location = `/portal/confirming?token=${encodeURIComponent(token)}&lang=${lang}&accepted=${payableId}`;
        return new Response(null, { status: 303, headers: { ...(set.headers as Record<string, string>), 'cache-control': 'no-store' } });
      },
      { detail: { hide: true } },
    );

  return new Elysia({ name: 'portal' }).use(embed).use(pages);
}
