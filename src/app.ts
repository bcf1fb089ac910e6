import { Elysia, type AnyElysia } from 'elysia';
import type { AppContext } from './context';
import { httpPlumbing } from './plugins/http-errors';
import { systemRoutes } from './features/system';
import { adminRoutes } from './features/admin';
import { scoreRoutes, scoreService } from './features/score';
import { esgRoutes } from './features/esg';

/** The HTTP application: plumbing first (request id, parsing, errors, log), then the features. */
export function createApp(ctx: AppContext) {
  let app: AnyElysia;
  app = new Elysia({ name: 'api' })
    .use(httpPlumbing(ctx, () => app.routes.map((r) => ({ method: r.method, path: r.path }))))
    .use(systemRoutes(ctx, () => app))
    .use(scoreRoutes(ctx, scoreService(ctx)))
    .use(esgRoutes(ctx))
    .use(adminRoutes(ctx));
  return app;
}
export type App = ReturnType<typeof createApp>;
