import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed, jsonAnswer } from '../../plugins/auth';
import { routeDocs } from '../../lib/api-doc';
import { ScreenRequest, ScreenResponse, ScreeningIdParams, ScreeningListQuery } from './model';
import { Page } from '../../lib/schemas';
import { AmlService } from './service';
import type { ListName } from './lists';
import unSample from '../../../fixtures/sanctions/un_consolidated_list.xml' with { type: 'file' };

export const amlService = (ctx: AppContext) => new AmlService(ctx.database, ctx.usage, () => ctx.clock.now(), ctx.events);

/** A list source: `bundled:un` (the UN sample shipped with the service), a file path or an http(s) URL. */
export async function openListSource(source: string): Promise<AsyncIterable<Uint8Array>> {
  if (source === 'bundled:un') return Bun.file(unSample as unknown as string).stream() as unknown as AsyncIterable<Uint8Array>;
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(120_000) });
    if (!res.ok || !res.body) throw new Error(`${source} answered ${res.status}`);
    return res.body as unknown as AsyncIterable<Uint8Array>;
  }
  const file = Bun.file(source);
  if (!(await file.exists())) throw new Error(`no file ${source}`);
  return file.stream() as unknown as AsyncIterable<Uint8Array>;
}

/** At start: each configured list that has no version yet is loaded (a failure is logged, not fatal). */
export async function loadConfiguredLists(ctx: AppContext, service = amlService(ctx)) {
  const active = new Set((await service.activeLists()).map((a) => a.list));
  for (const [list, source] of Object.entries(ctx.config.amlSources) as [ListName, string | null][]) {
    if (!source || active.has(list)) continue;
    try {
      const r = await service.loadList(list, await openListSource(source), source);
      ctx.log.info('sanctions list loaded', { list, entries: r.entries, names: r.names, generated_at: r.generated_at });
    } catch (err) {
      ctx.log.error('sanctions list not loaded', { list, source, error: (err as Error).message });
    }
  }
}

/** The generated_at a list file declares in its root element (read from its first 64 KB). */
export async function peekGeneratedAt(source: string): Promise<string | null> {
  let head = '';
  const decoder = new TextDecoder();
  for await (const chunk of await openListSource(source)) {
    head += decoder.decode(chunk, { stream: true });
    if (head.length > 65_536 || /(dateGenerated|generationDate)="[^"]+"/.test(head)) break;
  }
  const m = /(?:dateGenerated|generationDate)="([^"]+)"/.exec(head);
  const d = m ? new Date(m[1]!) : null;
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : null;
}

/**
 * The scheduled refresh (job aml.refresh, AML_REFRESH_CRON): each configured source whose file
 * declares a generation other than the active version's is loaded — by one process only (a claim
 * per list and generation in app_meta), whatever the number of replicas.
 */
export async function refreshLists(ctx: AppContext, service = amlService(ctx)) {
  const active = new Map((await service.activeLists()).map((a) => [a.list, a.generatedAt.toISOString()]));
  const loaded: string[] = [];
  for (const [list, source] of Object.entries(ctx.config.amlSources) as [ListName, string | null][]) {
    if (!source) continue;
    try {
      const generated = await peekGeneratedAt(source);
      if (!generated || active.get(list) === generated) continue;
      const { withTx, t } = ctx.database;
      const claimed = await withTx((tx) => tx.insert(t.appMeta).values({ key: `aml-refresh:${list}:${generated}`, value: new Date().toISOString() }).onConflictDoNothing().returning({ key: t.appMeta.key }));
      if (!claimed.length) continue;
      const r = await service.loadList(list, await openListSource(source), source);
      ctx.log.info('sanctions list refreshed', { list, entries: r.entries, generated_at: r.generated_at, rescreened: r.monitoring.rescreened, alerts: r.monitoring.alerts });
      loaded.push(list);
    } catch (err) {
      ctx.log.error('sanctions list refresh failed; the previous version stays active', { list, source, error: (err as Error).message });
    }
  }
  return loaded;
}

/** AML screening (scope `compliance`). */
export function amlRoutes(ctx: AppContext, service: AmlService) {
  const doc = routeDocs('compliance');
  return new Elysia({ name: 'aml' })
    .use(authed(ctx, 'compliance'))
    .post('/v1/aml/screen', async ({ auth, body, set }) => jsonAnswer((await service.screen(auth, body)).text, set.headers), {
      body: ScreenRequest,
      response: { 200: ScreenResponse },
      detail: doc(
        'Screen a name against the sanctions lists (UN, EU)',
        'amlScreen',
        ['service_unavailable'],
        'Normalised, order-free token matching with Jaro–Winkler, aliases, and birth date, country and type adjusting the score; every match explained. Stored 7 years as an AML record (GET /v1/aml/screenings/{id}). docs/aml.md.',
        {
          listed_person_typo: { summary: 'A UN-listed person with a typo, birth year and nationality: match', value: { name: 'Erik Badege', type: 'person', birth_date: '1971', nationality: 'CD', customer_reference: 'onboarding-7' } },
          portuguese_name: { summary: 'A common Portuguese name: clear', value: { name: 'Maria Fernandes', type: 'person' } },
          monitored_company: { summary: 'A company kept under monitoring (aml.alert on a new match after a list update)', value: { name: 'Sovfracht Shipping', type: 'organisation', country: 'RU', monitor: true } },
        },
      ),
    })
    .get('/v1/aml/screenings', ({ auth, query }) => service.list(auth, query), {
      query: ScreeningListQuery,
      response: { 200: Page(ScreenResponse) },
      detail: doc('Past screenings, newest first (filter by status)', 'listScreenings'),
    })
    .get('/v1/aml/screenings/:id', ({ auth, params }) => service.get(auth, params.id), {
      params: ScreeningIdParams,
      response: { 200: ScreenResponse },
      detail: doc('One stored screening', 'getScreening', ['resource_not_found']),
    });
}
