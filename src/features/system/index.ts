import { marked } from 'marked';
import { Elysia } from 'elysia';
import { publicBaseUrl } from '../../config';
// file imports: Bun embeds these assets in the single binary and gives a path that Bun.file can read
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import type { AnyElysia } from 'elysia';
import type { AppContext } from '../../context';
import { ApiError, ERROR_CATALOGUE } from '../../lib/errors';
import { buildOpenApi } from './openapi';
import { API_CATALOG } from './catalog';
// the policy pages the API's answers link to (methodology_url, sources), embedded in the binary
import creditPolicyDoc from '../../../docs/credit-policy.md' with { type: 'text' };
import sectorRiskDoc from '../../../docs/sector-risk.md' with { type: 'text' };

const MARKDOWN_PAGES: Record<string, string> = { 'credit-policy': creditPolicyDoc, 'sector-risk': sectorRiskDoc };
/** the pages as HTML (marked: CommonMark and GitHub's tables), rendered once: our own text, trusted */
const markdownPages = new Map(Object.entries(MARKDOWN_PAGES).map(([name, text]) => [name, marked.parse(text, { async: false, gfm: true })]));

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const html = (title: string, body: string) =>
  new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><meta name="viewport" content="width=device-width,initial-scale=1"><style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .25rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}</style></head><body>${body}</body></html>`,
    { headers: { 'content-type': 'text/html; charset=utf-8' } },
  );

/** Probes, the OpenAPI document, the API reference UI and the error catalogue: no auth, no rate limit. */
export function systemRoutes(ctx: AppContext, getApp: () => AnyElysia) {
  let spec: unknown = null;
  const baseUrl = () => publicBaseUrl(ctx.config);
  return new Elysia({ name: 'system' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async () => {
        const checks: Record<string, string> = {};
        try {
          await ctx.database.ping();
          checks.database = 'ok';
        } catch (err) {
          checks.database = `unreachable: ${(err as Error).message}`;
        }
        if (ctx.redis) {
          try {
            await ctx.redis.ping();
            checks.redis = 'ok';
          } catch (err) {
            checks.redis = `unreachable: ${(err as Error).message}`;
          }
          const limiterProblem = ctx.limiter.recheck ? await ctx.limiter.recheck() : ctx.limiter.problem();
          if (limiterProblem) checks.rate_limiter = limiterProblem;
        }
        const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
        if (failing.length)
          throw new ApiError('service_unavailable', `Not ready: ${failing.map(([k, v]) => `${k} ${v}`).join('; ')}`, { body: { checks } });
        return { status: 'ready', checks };
      },
      { detail: { hide: true } },
    )
    .get(
      '/openapi.json',
      () => {
        spec ??= buildOpenApi(getApp(), baseUrl());
        return spec;
      },
      { detail: { hide: true } },
    )
    .get(
      '/docs',
      () =>
        new Response(
          `<!doctype html><html><head><meta charset="utf-8"><title>API reference</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head><body><div id="ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/assets/init.js"></script></body></html>`,
          { headers: { 'content-type': 'text/html; charset=utf-8' } },
        ),
      { detail: { hide: true } },
    )
    .get(
      '/docs/assets/init.js',
      () =>
        new Response(`window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', deepLinking: true });`, {
          headers: { 'content-type': 'text/javascript' },
        }),
      { detail: { hide: true } },
    )
    .get('/docs/assets/swagger-ui.css', () => new Response(Bun.file(swaggerCss), { headers: { 'content-type': 'text/css' } }), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui-bundle.js', () => new Response(Bun.file(swaggerBundle), { headers: { 'content-type': 'text/javascript' } }), {
      detail: { hide: true },
    })
    .get(
      '/docs/errors',
      ({ headers }) => {
        const list = Object.entries(ERROR_CATALOGUE).map(([code, v]) => ({ code, status: v.status, meaning: v.meaning }));
        if ((headers.accept ?? '').includes('application/json')) return { errors: list };
        return html(
          'Error codes',
          `<h1>Error codes</h1><p>Every error response has the body <code>{code, message, status, requestId, docsUrl?, fields?}</code>; <code>status</code> repeats the HTTP status and <code>fields</code> lists each invalid field as <code>{path, message}</code>.</p><table><tr><th>code</th><th>HTTP</th><th>meaning</th></tr>${list
            .map((e) => `<tr id="${e.code}"><td><code>${e.code}</code></td><td>${e.status}</td><td>${esc(e.meaning)}</td></tr>`)
            .join('')}</table>`,
        );
      },
      { detail: { hide: true } },
    )
    .get(
      '/docs/:page',
      ({ params, headers }) => {
        const text = MARKDOWN_PAGES[params.page];
        if (text === undefined) throw new ApiError('not_found', `No documentation page ${params.page.slice(0, 64)}; see /docs.`);
        // a page for a person (a browser, curl's */*), its Markdown source for whoever asks for it
        const accept = headers.accept ?? '';
        if (/\btext\/markdown\b/i.test(accept) && !/\btext\/html\b/i.test(accept)) return new Response(text, { headers: { 'content-type': 'text/markdown; charset=utf-8', vary: 'Accept' } });
        const page = html(/^# (.+)$/m.exec(text)?.[1] ?? params.page, markdownPages.get(params.page)!);
        page.headers.set('vary', 'Accept');
        return page;
      },
      { detail: { hide: true } },
    )
    .get(
      '/roadmap',
      () =>
        html(
          'Roadmap',
          `<h1>Roadmap</h1><ul><li>Live scoring (sk_live_ keys): composed from a credit bureau, the Banco de Portugal central credit register and tax-authority validation. Available once the three adapters are configured for this deployment; until then POST /v1/score answers 503 <code>live_tier_not_available</code>.</li><li>Live ERP OAuth: one provider in Q3 2026, the remaining providers in Q4 2026, further providers in Q1 2027; until configured, 503 <code>oauth_credentials_not_configured</code>.</li></ul><h2>API catalog</h2><p>The further APIs of the catalog and what this deployment serves of them. The others answer 404 <code>not_found</code>.</p><table><tr><th>method</th><th>path</th><th>readiness</th><th>served here</th></tr>${API_CATALOG.map(
            (e) => `<tr><td>${e.method}</td><td><code>${esc(e.path)}</code></td><td>${esc(e.readiness)}</td><td>${e.servedAs ? esc(e.servedAs) : 'not yet'}</td></tr>`,
          ).join('')}</table>`,
        ),
      { detail: { hide: true } },
    );
}
