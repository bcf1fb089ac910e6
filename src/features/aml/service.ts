import { and, desc, eq, gt, lt, ne } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError, validationError, type FieldError } from '../../lib/errors';
import { pageOf } from '../../lib/schemas';
import type { UsageMeter } from '../usage/service';
import type { ScoreCaller } from '../score/service';
import { parseEuList, parseUnList, type ListEntry, type ListName } from './lists';
import { buildIndex, DEFAULT_MIN_SCORE, identifiesSomeone, MATCH_SCORE, screen, type ScreeningIndex } from './matcher';
import type { ScreenResponseBody } from './model';
import type { EventService } from '../events/service';

/** AML records are kept 7 years (Lei 83/2017 art. 51.º) */
export const AML_RETENTION_YEARS = 7;
const INDEX_CHECK_MS = 1000;
const LOAD_BATCH = 500;

export interface ListLoadResult {
  /** subjects under monitoring screened again after this load, and the alerts that raised */
  monitoring: { rescreened: number; alerts: number };
  list: ListName;
  version_id: string;
  generated_at: string;
  entries: number;
  names: number;
  persons: number;
  organisations: number;
}

type Chunks = AsyncIterable<string | Uint8Array>;

/** Sanctions lists (loading, the in-process screening index) and screenings. */
export class AmlService {
  private index: { versions: string; built: ScreeningIndex; lists: ScreenResponseBody['lists'] } | null = null;
  private checkedAt = 0;

  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
    /** where aml.alert events go (the outbox); without it a list update re-screens nothing */
    private readonly events: EventService | null = null,
  ) {}

  /**
   * Loads a list file as a new version, in one transaction: every entry, then this version active
   * and the list's earlier versions inactive (and their entries deleted). A file that does not
   * parse throws ListFormatError and changes nothing.
   */
  async loadList(list: ListName, chunks: Chunks, source: string): Promise<ListLoadResult> {
    const { t } = this.database;
    const versionId = crypto.randomUUID();
    const counts = { entries: 0, names: 0, persons: 0, organisations: 0 };
    let generatedAt = '';
    await this.database.withTx(async (tx) => {
      let batch: ListEntry[] = [];
      const flush = async () => {
        if (!batch.length) return;
        const rows = batch.map((e) => ({ id: crypto.randomUUID(), versionId, list, entryId: e.entry_id, entryType: e.entry_type, data: e as unknown as Record<string, unknown> }));
        batch = [];
        await this.database.insertMany(tx, t.amlEntries, rows);
      };
      const onEntry = async (e: ListEntry) => {
        counts.entries++;
        counts.names += e.names.length;
        if (e.entry_type === 'person') counts.persons++;
        else counts.organisations++;
        batch.push(e);
        if (batch.length >= LOAD_BATCH) await flush();
      };
      const header = list === 'un' ? await parseUnList(chunks, onEntry) : await parseEuList(chunks, onEntry);
      await flush();
      generatedAt = header.generated_at;
      const v = t.amlListVersions;
      const old = await tx.select({ id: v.id }).from(v).where(eq(v.list, list));
      for (const o of old) await tx.delete(t.amlEntries).where(eq(t.amlEntries.versionId, o.id));
      await tx.update(v).set({ active: false }).where(eq(v.list, list));
      await tx.insert(v).values({ id: versionId, list, generatedAt: new Date(header.generated_at), loadedAt: this.now(), entries: counts.entries, names: counts.names, source, active: true });
    });
    this.index = null; // this process sees the new version at once; the others within a second
    const monitoring = await this.rescreenMonitored(list);
    return { list, version_id: versionId, generated_at: generatedAt, ...counts, monitoring };
  }

  /**
   * After a list update: every monitored subject (the latest screening of each with monitor: true)
   * is screened again with its original query. The new screening takes over the monitoring; when
   * it finds a match on an entry the previous one did not report, or a worse status, an aml.alert
   * event is written in the same transaction (signed webhooks deliver it).
   */
  async rescreenMonitored(updatedList?: ListName): Promise<{ rescreened: number; alerts: number }> {
    if (!this.events) return { rescreened: 0, alerts: 0 };
    const s = this.database.t.amlScreenings;
    const tn = this.database.t.tenants;
    let rescreened = 0;
    let alerts = 0;
    let after = '';
    const rank = { clear: 0, potential_match: 1, match: 2 } as const;
    for (;;) {
      const page = await this.database.db
        .select({ id: s.id, tenantId: s.tenantId, env: s.env, response: s.response, customerReference: s.customerReference })
        .from(s)
        // an erased tenant's subjects are no longer monitored (its erasure ends their monitoring;
        // this also holds for screenings of tenants erased before it did)
        .innerJoin(tn, and(eq(tn.id, s.tenantId), ne(tn.status, 'terminated')))
        .where(and(eq(s.monitor, true), gt(s.id, after)))
        .orderBy(s.id)
        .limit(200);
      for (const row of page) {
        const previous = JSON.parse(row.response) as ScreenResponseBody;
        const caller = { tenantId: row.tenantId, env: row.env as 'sandbox' | 'live', keyId: null, requestId: null };
        const q = previous.query;
        const next = await this.screen(
          caller,
          {
            name: q.name,
            type: q.type as 'person' | 'organisation' | 'any',
            ...(q.birth_date ? { birth_date: q.birth_date } : {}),
            ...(q.country ? { country: q.country } : {}),
            ...(q.nif ? { nif: q.nif } : {}),
            min_score: q.min_score,
            monitor: true,
            ...(row.customerReference !== null ? { customer_reference: row.customerReference } : {}),
          },
          {
            bill: false,
            previousId: row.id,
            alert: (body) => {
              const seen = new Set(previous.matches.map((m) => `${m.list}:${m.entry_id}`));
              const fresh = body.matches.filter((m) => !seen.has(`${m.list}:${m.entry_id}`));
              if (!fresh.length && rank[body.status] <= rank[previous.status]) return null;
              return {
                screening_id: body.screening_id,
                previous_screening_id: row.id,
                subject: q.name,
                status: body.status,
                previous_status: previous.status,
                new_matches: fresh.map((m) => ({ list: m.list, entry_id: m.entry_id, matched_name: m.matched_name, score: m.score, match_type: m.match_type })),
                updated_list: updatedList ?? null,
                ...(row.customerReference !== null ? { customer_reference: row.customerReference } : {}),
              };
            },
          },
        );
        rescreened++;
        if (next.alerted) alerts++;
      }
      if (page.length < 200) break;
      after = page[page.length - 1]!.id;
    }
    if (alerts) this.events.onEmitted();
    return { rescreened, alerts };
  }

  async activeLists() {
    const v = this.database.t.amlListVersions;
    return this.database.db.select().from(v).where(eq(v.active, true)).orderBy(v.list);
  }

  /** The index of the active versions, rebuilt when they change (checked at most once a second). */
  private async currentIndex() {
    const nowMs = Date.now();
    if (this.index && nowMs - this.checkedAt < INDEX_CHECK_MS) return this.index;
    this.checkedAt = nowMs;
    const active = await this.activeLists();
    const versions = active.map((a) => a.id).join(',');
    if (this.index?.versions === versions) return this.index;
    const e = this.database.t.amlEntries;
    const entries: ListEntry[] = [];
    for (const a of active) {
      const rows = await this.database.db.select({ data: e.data }).from(e).where(eq(e.versionId, a.id));
      for (const r of rows) entries.push(r.data as unknown as ListEntry);
    }
    this.index = {
      versions,
      built: buildIndex(entries),
      lists: active.map((a) => ({ name: a.list, generated_at: a.generatedAt.toISOString(), loaded_at: a.loadedAt.toISOString(), entries: a.entries })),
    };
    return this.index;
  }

  async screen(
    caller: ScoreCaller,
    body: { name: string; type?: 'person' | 'organisation' | 'any'; birth_date?: string; nationality?: string; country?: string; nif?: string; min_score?: number; lists?: string[]; monitor?: boolean; customer_reference?: string },
    opts: {
      bill?: boolean;
      fieldPath?: string;
      /** where a birth date after today is reported (default birth_date) */
      birthDatePath?: string;
      /** a re-screen of this monitored screening: it stops monitoring in the same transaction */
      previousId?: string;
      /** the aml.alert payload for this result, or null for none (re-screens) */
      alert?: (body: ScreenResponseBody) => Record<string, unknown> | null;
    } = {},
  ): Promise<{ body: ScreenResponseBody; text: string; alerted?: boolean }> {
    const invalid = queryProblems(body, this.now(), opts);
    if (invalid.length) throw validationError(invalid);
    const idx = await this.currentIndex();
    if (!idx.lists.length) throw new ApiError('service_unavailable', 'No sanctions list is loaded yet; nothing was screened. Retry later.', { headers: { 'retry-after': '30' } });
    const loaded = idx.lists.map((l) => l.name);
    const unknown = (body.lists ?? []).filter((l) => !loaded.includes(l));
    if (unknown.length) throw validationError([{ path: 'lists', message: `unknown or not loaded: ${unknown.join(', ')} (loaded: ${loaded.join(', ')})` }]);
    const minScore = body.min_score ?? DEFAULT_MIN_SCORE;
    const country = (body.nationality ?? body.country)?.toUpperCase();
    const type = body.type ?? 'any';
    const found = screen(idx.built, { name: body.name, type, birth_date: body.birth_date, country, min_score: minScore, lists: body.lists });
    const top = found[0]?.score ?? null;
    const status = top === null ? 'clear' : top >= MATCH_SCORE ? 'match' : 'potential_match';
    const screenedAt = this.now();
    const id = `scr_${Bun.randomUUIDv7()}`;
    const response: ScreenResponseBody = {
      screening_id: id,
      status,
      matches: found.slice(0, 50).map((m) => ({
        list: m.entry.list,
        entry_id: m.entry.entry_id,
        matched_name: m.matched_name,
        entry_type: m.entry.entry_type,
        score: m.score,
        match_type: m.match_type,
        explanation: m.explanation,
        programme: m.entry.programme,
        listed_on: m.entry.listed_on,
      })),
      lists: idx.lists.filter((l) => !body.lists || body.lists.includes(l.name)),
      query: { name: body.name, type, birth_date: body.birth_date ?? null, country: country ?? null, nif: body.nif ?? null, min_score: minScore },
      monitor: body.monitor ?? false,
      screened_at: screenedAt.toISOString(),
      synthetic: caller.env === 'sandbox',
      ...(opts.previousId ? { previous_screening_id: opts.previousId } : {}),
      ...(body.customer_reference !== undefined ? { customer_reference: body.customer_reference } : {}),
    };
    const text = JSON.stringify(response);
    const alert = opts.alert?.(response) ?? null;
    await this.database.withTx(async (tx) => {
      if (opts.previousId) await tx.update(this.database.t.amlScreenings).set({ monitor: false }).where(eq(this.database.t.amlScreenings.id, opts.previousId));
      if (alert && this.events) await this.events.emit(tx, { tenantId: caller.tenantId, env: caller.env, type: 'aml.alert', data: alert });
      await this.database.insertMany(tx, this.database.t.amlScreenings, [{
        id,
        tenantId: caller.tenantId,
        env: caller.env,
        name: body.name,
        status,
        topScore: top,
        customerReference: body.customer_reference ?? null,
        monitor: body.monitor ?? false,
        response: text,
        createdAt: screenedAt,
      }]);
    });
    if (opts.bill !== false) this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter: 'aml_screen' });
    return { body: response, text, alerted: alert !== null };
  }

  async get(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, id: string) {
    const s = this.database.t.amlScreenings;
    const [row] = await this.database.db.select({ response: s.response }).from(s).where(and(eq(s.tenantId, caller.tenantId), eq(s.env, caller.env), eq(s.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No screening ${id} for this tenant in this environment.`);
    return storedScreening(row.response);
  }

  async list(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, q: { status?: string; limit?: number; cursor?: string }) {
    const s = this.database.t.amlScreenings;
    const limit = q.limit ?? 50;
    const conds = [eq(s.tenantId, caller.tenantId), eq(s.env, caller.env)];
    if (q.status) conds.push(eq(s.status, q.status));
    if (q.cursor) conds.push(lt(s.id, q.cursor));
    const rows = await this.database.db.select({ id: s.id, response: s.response }).from(s).where(and(...conds)).orderBy(desc(s.id)).limit(limit + 1);
    return pageOf(rows, limit, (r) => storedScreening(r.response), (r) => r.id);
  }
}

/** A stored screening as answered now: matches stored before alias_quality existed get it as null (unknown). */
function storedScreening(text: string): ScreenResponseBody {
  const body = JSON.parse(text) as ScreenResponseBody;
  for (const m of body.matches) m.explanation.alias_quality ??= null;
  return body;
}

/**
 * What makes a screening query unusable, before anything is looked up or stored: a name that says
 * who is meant (two letters or digits besides titles, connectives and company forms), and a birth
 * date not after today (a re-screen of a monitored subject is not judged again).
 */
export function queryProblems(body: { name: string; birth_date?: string }, now: Date, paths: { fieldPath?: string; birthDatePath?: string; previousId?: string } = {}): FieldError[] {
  const problems: FieldError[] = [];
  if (!identifiesSomeone(body.name)) problems.push({ path: paths.fieldPath ?? 'name', message: 'must contain at least two letters or digits besides titles, connectives and company forms (Dr., da, Lda, S.A.)' });
  if (body.birth_date && !paths.previousId) {
    const today = now.toISOString().slice(0, 10);
    if (body.birth_date.length === 4 ? body.birth_date > today.slice(0, 4) : body.birth_date > today) problems.push({ path: paths.birthDatePath ?? 'birth_date', message: `must not be after today (${today})` });
  }
  return problems;
}
