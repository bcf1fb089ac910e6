import { Elysia, type AnyElysia } from 'elysia';
import type { AppContext } from './context';
import { httpPlumbing, lastResort } from './plugins/http-errors';
import { systemRoutes } from './features/system';
import { adminRoutes } from './features/admin';
import { gdprRoutes, subjectRequestRoutes } from './features/gdpr';
import { scoreRoutes, scoreService } from './features/score';
import { esgFastPath, esgRoutes, esgService } from './features/esg';
import { erpRoutes, erpService } from './features/erp';
import { webhookRoutes, webhookService } from './features/webhooks';
import { RescoreService } from './features/score/rescore';
import { registerJobs } from './workers';
import { metricsRoutes } from './features/metrics';
import { scoreFastPath } from './features/score/fast-path';
import { decisionRoutes, decisionService } from './features/decision';
import { decisionFastPath } from './features/decision/fast-path';
import { amlRoutes, amlService } from './features/aml';
import { nifRoutes, nifService } from './features/nif';
import { kycRoutes } from './features/kyc';
import { reconcileRoutes } from './features/reconcile';
import { invoiceRoutes } from './features/invoice';
import { saftRoutes } from './features/saft';
import { auditRoutes, auditTrail } from './features/audit';
import { capitalRoutes } from './features/capital';
import { csrdRoutes } from './features/csrd';
import { catalogRoutes } from './features/system/catalog-routes';
import { OAuthTokens, oauthRoutes } from './features/oauth';
import { noticeRoutes } from './features/notice';
import { insuranceRoutes, insuranceService } from './features/insurance';
import { CONFIRMING_DEFAULT_SWEEP, confirmingRoutes, confirmingService } from './features/confirming';
import { portalRoutes } from './features/portal';
import { forecastRoutes } from './features/forecast';
import { FACTORING_DEFAULT_SWEEP, factoringRoutes, factoringService } from './features/factoring';

type NativeRoute = (request: Request) => Promise<Response>;
/** Routes Bun serves before Elysia's router: path → method → handler (see scoreFastPath). */
export type NativeRoutes = Record<string, Record<string, NativeRoute>>;

/** The HTTP application: plumbing first (request id, parsing, errors, log), then the features. */
export function createApp(ctx: AppContext) {
  const scores = scoreService(ctx);
  const webhooks = webhookService(ctx);
  erpService(ctx); // validates the ERP_* configuration now, so a bad value stops the start
  const rescore = new RescoreService(ctx.database, scores, ctx.events, () => ctx.clock.now(), ctx.config.rescoreLookbackDays, ctx.log);
  ctx.services = { scores, webhooks, rescore };
  registerJobs(ctx, ctx.services);
  const nifs = nifService(ctx);
  const aml = amlService(ctx);
  ctx.oauth = new OAuthTokens(ctx);
  const decisions = decisionService(ctx, scores);
  const audit = auditTrail(ctx);
  const factoring = factoringService(ctx, decisions, audit);
  // every replica may run it: each default is a compare-and-set, one wins
  ctx.sweeps.set(FACTORING_DEFAULT_SWEEP, { everyMs: 60_000, run: () => factoring.flagDefaults() });
  const confirming = confirmingService(ctx, decisions, audit);
  ctx.sweeps.set(CONFIRMING_DEFAULT_SWEEP, { everyMs: 60_000, run: () => confirming.flagDefaults() });
  let app: AnyElysia;
  const esg = esgService(ctx);
  // the hot JSON POSTs answered without Elysia's lifecycle in their plain case (plugins/fast-path.ts)
  const native = (fast: (request: Request) => Promise<Response | null>) => ({
    POST: (request: Request) =>
      fast(request)
        .then((answer) => answer ?? app.handle(request))
        .catch((error) => lastResort(ctx, request, error)),
  });
  const nativeRoutes: NativeRoutes = {
    '/v1/score': native(scoreFastPath(ctx, scores)),
    '/v1/esg': native(esgFastPath(ctx, esg, '/v1/esg')),
    '/v1/esg-score': native(esgFastPath(ctx, esg, '/v1/esg-score')),
    '/v1/decision': native(decisionFastPath(ctx, decisions)),
  };
  app = new Elysia({ name: 'api', encodeSchema: false, serve: { routes: nativeRoutes as never } })
    .use(httpPlumbing(ctx, () => app.routes.map((r) => ({ method: r.method, path: r.path }))))
    .use(systemRoutes(ctx, () => app))
    .use(metricsRoutes(ctx, ctx.metrics))
    .use(scoreRoutes(ctx, scores, rescore))
    .use(decisionRoutes(ctx, decisions))
    .use(nifRoutes(ctx, nifs))
    .use(amlRoutes(ctx, aml))
    .use(kycRoutes(ctx, { nif: nifs, aml, scores }))
    .use(esgRoutes(ctx, esg))
    .use(csrdRoutes(ctx))
    .use(erpRoutes(ctx))
    .use(reconcileRoutes(ctx))
    .use(invoiceRoutes(ctx))
    .use(saftRoutes(ctx))
    .use(auditRoutes(ctx, audit))
    .use(factoringRoutes(ctx, factoring))
    .use(noticeRoutes(ctx, { factoring, audit }))
    .use(insuranceRoutes(ctx, insuranceService(ctx, decisions, audit)))
    .use(confirmingRoutes(ctx, confirming))
    .use(portalRoutes(ctx, confirming))
    .use(forecastRoutes(ctx))
    .use(capitalRoutes(ctx, scores))
    .use(catalogRoutes(ctx))
    .use(oauthRoutes(ctx, ctx.oauth))
    .use(adminRoutes(ctx))
    .use(gdprRoutes(ctx))
    .use(subjectRequestRoutes(ctx))
    .use(webhookRoutes(ctx, webhooks));
  return app;
}
export type App = ReturnType<typeof createApp>;

/**
 * One request as the HTTP server routes it: Bun's native routes first, then Elysia. Tests call
 * the application through this, so they exercise the same paths as the server.
 */
export function dispatch(app: AnyElysia, request: Request): Promise<Response> {
  const routes = (app.config.serve as { routes?: NativeRoutes } | undefined)?.routes;
  const native = routes?.[new URL(request.url).pathname]?.[request.method];
  return native ? native(request) : app.handle(request);
}
