import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { EsgAssessment, EsgResponse } from '../src/features/esg/model';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { answersSchema, INDICATORS, isValidSector, validateAnswers } from '../src/features/esg/questionnaire';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { mulberry32 } from '../src/lib/prng';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp();
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());

const esg = (body: unknown, o: { key?: string; headers?: Record<string, string>; path?: string } = {}) =>
  h.json('POST', o.path ?? '/v1/esg', { key: o.key ?? key, body, headers: o.headers });

describe('POST /v1/esg', () => {
  test.each([
    ['leader', 'leader'],
    ['developing_manufacturer', 'developing'],
    ['lagging_services', 'lagging'],
  ] as const)('example %s → §2.4 response with tier %s', async (name, tier) => {
    const r = await esg(ESG_EXAMPLES[name]);
    expect(r.status).toBe(200);
    expect(Value.Check(EsgResponse, r.body)).toBe(true);
    expect(r.body.tier).toBe(tier);
    expect(r.body.synthetic).toBe(true);
    expect(r.body.algorithm_version).toMatch(/^esg-\d+\.\d+\.\d+$/);
    const sdgs: number[] = r.body.aligned_sdgs;
    expect([...new Set(sdgs)].sort((a, b) => a - b)).toEqual(sdgs);
    r.body.recommendations.forEach((rec: any, i: number) => expect(rec.priority).toBe(i + 1));
  });

  test('POST /v1/esg-score is the same operation', async () => {
    const a = await esg(ESG_EXAMPLES.developing_manufacturer);
    const b = await esg(ESG_EXAMPLES.developing_manufacturer, { path: '/v1/esg-score' });
    expect(b.status).toBe(200);
    const { computed_at: _a, assessment_id: _ia, ...ra } = a.body;
    const { computed_at: _b, assessment_id: _ib, ...rb } = b.body;
    expect(_ia).not.toBe(_ib);
    expect(rb).toEqual(ra);
  });

  test('an empty questionnaire is a valid lagging result with recommendations', async () => {
    const r = await esg({ nif: '500000000', sector: 'F', answers: {} });
    expect(r.status).toBe(200);
    expect(r.body.tier).toBe('lagging');
    expect(r.body.vsme_alignment).toBe(0);
    expect(r.body.recommendations.length).toBeGreaterThan(0);
  });

  test('customer_reference is echoed; recommendations in Portuguese with Accept-Language: pt-PT', async () => {
    const en = await esg({ ...ESG_EXAMPLES.lagging_services, customer_reference: 'cli-7' });
    const pt = await esg({ ...ESG_EXAMPLES.lagging_services, customer_reference: 'cli-7' }, { headers: { 'accept-language': 'pt-PT' } });
    expect(en.body.customer_reference).toBe('cli-7');
    expect(pt.body.recommendations[0].id).toBe(en.body.recommendations[0].id);
    expect(pt.body.recommendations[0].title).not.toBe(en.body.recommendations[0].title);
    expect(pt.headers.get('content-language')).toBe('pt-PT');
    expect(pt.headers.get('vary')).toContain('Accept-Language');
    // the preferred supported language wins, wherever it stands in the list
    const fr = await esg(ESG_EXAMPLES.lagging_services, { headers: { 'accept-language': 'fr-FR, pt-PT;q=0.8, en;q=0.5' } });
    expect(fr.body.recommendations[0].title).toBe(pt.body.recommendations[0].title);
    const enFirst = await esg(ESG_EXAMPLES.lagging_services, { headers: { 'accept-language': 'en-GB, pt;q=0.9' } });
    expect(enFirst.body.recommendations[0].title).toBe(en.body.recommendations[0].title);
  });

  test('live keys compute too (no outside data needed), not synthetic', async () => {
    const live = await h.tenant({ env: 'live' });
    const r = await esg(ESG_EXAMPLES.leader, { key: live.api_key });
    expect(r.status).toBe(200);
    expect(r.body.synthetic).toBe(false);
  });

  test('every assessment is stored with its inputs and result, and metered', async () => {
    const t = await h.tenant();
    const r = await esg(ESG_EXAMPLES.leader, { key: t.api_key });
    const e = h.ctx.database.t.esgAssessments;
    const rows = await h.ctx.database.db.select().from(e).where(eq(e.tenantId, t.tenant_id));
    expect(rows.length).toBe(1);
    expect(rows[0]!.id).toBe(r.body.assessment_id);
    expect(rows[0]!.answers).toEqual(ESG_EXAMPLES.leader.answers);
    expect((rows[0]!.result as any).tier).toBe('leader');
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    expect((await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id))).map((x) => x.meter)).toEqual(['esg']);
  });
});

describe('POST /v1/esg — errors', () => {
  test('unknown sector → 422 on sector', async () => {
    for (const sector of ['V', 'C99', 'c25', 'manufacturing']) {
      const b = expectError(await esg({ ...ESG_EXAMPLES.leader, sector }), 422, 'validation_failed');
      expect(b.fields.map((f: any) => f.path)).toEqual(['sector']);
    }
    // an unknown top-level field: ignored when the rest is valid, listed beside a real problem
    expect((await esg({ ...ESG_EXAMPLES.leader, extra: 1 })).status).toBe(200);
    expect(expectError(await esg({ ...ESG_EXAMPLES.leader, sector: 'V', extra: 1 }), 422, 'validation_failed').fields).toEqual([
      { path: 'sector', message: expect.any(String) },
      { path: 'extra', message: 'is not a field of this request (ignored)' },
    ]);
  });

  test('unknown key, wrong type, out of range, not_applicable where not allowed: every path at once', async () => {
    const b = expectError(
      await esg({
        nif: '12345',
        sector: 'C25',
        answers: { renewable_energy_pct: 150, work_fatalities: 'none', unknown_indicator: 3, min_wage_compliance: 'not_applicable' },
      }),
      422,
      'validation_failed',
    );
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(
      ['answers.min_wage_compliance', 'answers.renewable_energy_pct', 'answers.unknown_indicator', 'answers.work_fatalities', 'nif'].sort(),
    );
  });

  test('a NIF with a wrong check digit → 422 invalid_nif', async () => {
    const b = expectError(await esg({ ...ESG_EXAMPLES.leader, nif: '512345679' }), 422, 'invalid_nif');
    expect(b.fields[0].path).toBe('nif');
  });

  test('answers missing or not an object → 422 on answers', async () => {
    // worded as on every other route
    expect(expectError(await esg({ nif: '500000000', sector: 'A' }), 422, 'validation_failed').fields).toContainEqual({ path: 'answers', message: 'is required' });
    expect(expectError(await esg({ nif: '500000000', sector: 'A', answers: [1] }), 422, 'validation_failed').fields.map((f: any) => f.path)).toContain('answers');
  });

  test('401 before any validation; 403 without the esg scope; 429 over the limit', async () => {
    expectError(await h.json('POST', '/v1/esg', { body: { answers: { bogus: 1 } } }), 401, 'missing_api_key');
    const noScope = await h.tenant({ scopes: ['score'] });
    expectError(await esg(ESG_EXAMPLES.leader, { key: noScope.api_key }), 403, 'insufficient_scope');
    const t = await h.tenant();
    const limited = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', rateLimitPerMinute: 1 });
    expect((await esg(ESG_EXAMPLES.leader, { key: limited.api_key })).status).toBe(200);
    expectError(await esg(ESG_EXAMPLES.leader, { key: limited.api_key }), 429, 'rate_limited');
  });
});

describe('GET /v1/esg/assessments', () => {
  test('each assessment read back as it was answered (recommendations in the asked language); a NIF\'s newest first, paginated; not billed', async () => {
    const t = await h.tenant();
    const first = await esg({ ...ESG_EXAMPLES.leader, customer_reference: 'sup-1' }, { key: t.api_key });
    const second = await esg(ESG_EXAMPLES.developing_manufacturer, { key: t.api_key });
    const third = await esg(ESG_EXAMPLES.leader, { key: t.api_key });
    const one = await h.json('GET', `/v1/esg/assessments/${first.body.assessment_id}`, { key: t.api_key });
    expect(one.status).toBe(200);
    expect(Value.Check(EsgAssessment, one.body)).toBe(true);
    expect(one.body).toEqual({ ...first.body, nif: ESG_EXAMPLES.leader.nif, sector: ESG_EXAMPLES.leader.sector, answers: ESG_EXAMPLES.leader.answers });
    // in Portuguese: the same numbers and ids, the texts translated
    const pt = await h.json('GET', `/v1/esg/assessments/${first.body.assessment_id.toUpperCase()}`, { key: t.api_key, headers: { 'accept-language': 'pt-PT' } });
    expect(pt.headers.get('content-language')).toBe('pt-PT');
    expect(pt.body.recommendations.map((r: any) => r.id)).toEqual(first.body.recommendations.map((r: any) => r.id));
    expect(pt.body.recommendations[0].title).not.toBe(first.body.recommendations[0].title);
    const leader = ESG_EXAMPLES.leader.nif;
    const page = await h.json('GET', `/v1/esg/assessments?nif=${leader}&limit=1`, { key: t.api_key });
    expect(page.body.data.map((a: any) => a.assessment_id)).toEqual([third.body.assessment_id]);
    const rest = await h.json('GET', `/v1/esg/assessments?nif=${leader}&limit=1&cursor=${page.body.next_cursor}`, { key: t.api_key });
    expect([rest.body.data.map((a: any) => a.assessment_id), rest.body.next_cursor]).toEqual([[first.body.assessment_id], null]);
    const byNif = await h.json('GET', `/v1/esg/assessments?nif=${ESG_EXAMPLES.developing_manufacturer.nif}`, { key: t.api_key });
    expect(byNif.body.data.map((a: any) => a.assessment_id)).toEqual([second.body.assessment_id]);
    // a NIF is required (the list is one company's); a forged cursor is 422
    expect(expectError(await h.json('GET', '/v1/esg/assessments', { key: t.api_key }), 422, 'validation_failed').fields[0].path).toBe('query.nif');
    // times a row cannot have (an invalid date was a 500 on PostgreSQL)
    for (const time of [1e300, 9e15, -1]) {
      const forged = Buffer.from(JSON.stringify([time, 'x'])).toString('base64url');
      expectError(await h.json('GET', `/v1/esg/assessments?nif=${leader}&cursor=${forged}`, { key: t.api_key }), 422, 'validation_failed');
    }
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    expect((await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id))).reduce((n, r) => n + r.quantity, 0)).toBe(3); // the three assessments
    // a result stored before it carried its id and time: read back with them, from the columns
    const e = h.ctx.database.t.esgAssessments;
    const [row] = await h.ctx.database.db.select().from(e).where(eq(e.id, second.body.assessment_id));
    const { assessment_id: _id, computed_at: _at, ...older } = row!.result as Record<string, unknown>;
    await h.ctx.database.db.update(e).set({ result: older }).where(eq(e.id, second.body.assessment_id));
    expect((await h.json('GET', `/v1/esg/assessments/${second.body.assessment_id}`, { key: t.api_key })).body).toMatchObject({ assessment_id: second.body.assessment_id, computed_at: second.body.computed_at });
  });

  test('a recommendation\'s text fits the answers and is stored with the assessment: read back the same; an esg-1.0.0 assessment reads back as it was answered', async () => {
    const t = await h.tenant();
    // the leader holds ISO 14001, NP 4469 and ISO 9001: its one recommendation keeps those systems and proposes the others
    const posted = await esg(ESG_EXAMPLES.leader, { key: t.api_key });
    const ptPosted = await esg(ESG_EXAMPLES.leader, { key: t.api_key, headers: { 'accept-language': 'pt-PT' } });
    expect(posted.body.algorithm_version).toBe('esg-1.1.0');
    const [rec] = posted.body.recommendations;
    expect(rec.id).toBe('rec-certifications');
    expect(rec.body).toContain('Keep your environmental management system, your NP 4469 social responsibility management system and your ISO 9001 quality management system current');
    expect(rec.body).not.toContain('Start with the system closest');
    expect(ptPosted.body.recommendations[0].body).toContain('Mantenha em vigor o seu sistema de gestão ambiental, o seu sistema NP 4469 de gestão da responsabilidade social e o seu sistema ISO 9001 de gestão da qualidade');
    expect(ptPosted.body.recommendations[0].body).not.toContain('Comece pelo sistema');
    // stored as a reference naming its variant
    const e = h.ctx.database.t.esgAssessments;
    const [row] = await h.ctx.database.db.select().from(e).where(eq(e.id, posted.body.assessment_id));
    expect((row!.result as any).recommendations).toEqual([{ id: 'rec-certifications', priority: 1, impact: 'low', basis: 'weak', variant: 'holds_epq' }]);
    expect(row!.algorithmVersion).toBe('esg-1.1.0');
    // read back in either language as answered
    const got = await h.json('GET', `/v1/esg/assessments/${posted.body.assessment_id}`, { key: t.api_key });
    expect(got.body.recommendations).toEqual(posted.body.recommendations);
    const gotPt = await h.json('GET', `/v1/esg/assessments/${ptPosted.body.assessment_id}`, { key: t.api_key, headers: { 'accept-language': 'pt-PT' } });
    expect(gotPt.body.recommendations).toEqual(ptPosted.body.recommendations);
    // an assessment stored by esg-1.0.0 (its references have no variant): its esg-1.0.0 texts, not today's variant
    const v100 = { ...(row!.result as Record<string, unknown>), algorithm_version: 'esg-1.0.0', recommendations: [{ id: 'rec-certifications', priority: 1, impact: 'low', basis: 'weak' }] };
    await h.ctx.database.withTx((tx) => tx.update(e).set({ algorithmVersion: 'esg-1.0.0', result: v100 }).where(eq(e.id, posted.body.assessment_id)));
    const old = await h.json('GET', `/v1/esg/assessments/${posted.body.assessment_id}`, { key: t.api_key });
    expect(old.body.algorithm_version).toBe('esg-1.0.0');
    expect(old.body.recommendations).toEqual([{
      ...rec,
      title: 'Certify your management systems',
      body: 'Your answer is below the good-practice level used in this assessment. Start with the system closest to your main risks (ISO 14001 or EMAS for the environment, ISO 45001 for health and safety, ISO 50001 for energy), building on any ISO 9001 processes you already run.',
    }]);
    const oldPt = await h.json('GET', `/v1/esg/assessments/${posted.body.assessment_id}`, { key: t.api_key, headers: { 'accept-language': 'pt-PT' } });
    expect(oldPt.body.recommendations[0]).toMatchObject({ title: 'Certificar os sistemas de gestão', body: 'A sua resposta está abaixo do nível de boa prática usado nesta avaliação. Comece pelo sistema mais próximo dos seus principais riscos (ISO 14001 ou EMAS para o ambiente, ISO 45001 para a segurança e saúde no trabalho, ISO 50001 para a energia), aproveitando os processos ISO 9001 que já tenha.' });
    // and so does its VSME report (docs/csrd.md: recommendations of the assessment's algorithm)
    const report = await h.json('POST', '/v1/csrd/report', { key: t.api_key, body: { assessment_id: posted.body.assessment_id, language: 'en' } });
    expect(report.status).toBe(201);
    expect(report.body.recommendations[0].body).toBe(old.body.recommendations[0].body);
    expect(report.body.scores.algorithm_version).toBe('esg-1.0.0');
  });

  test('errors and isolation: not a UUID 404 as unknown, unknown 404, another tenant or environment 404, scope 403', async () => {
    const t = await h.tenant();
    const a = await esg(ESG_EXAMPLES.leader, { key: t.api_key });
    // a malformed id is an unknown one (test/malformed-ids.test.ts)
    expect(expectError(await h.json('GET', '/v1/esg/assessments/nope', { key: t.api_key }), 404, 'resource_not_found').fields).toBeUndefined();
    expectError(await h.json('GET', `/v1/esg/assessments/${crypto.randomUUID()}`, { key: t.api_key }), 404, 'resource_not_found');
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/esg/assessments/${a.body.assessment_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expect((await h.json('GET', `/v1/esg/assessments?nif=${ESG_EXAMPLES.leader.nif}`, { key: other.api_key })).body.data).toEqual([]);
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' });
    expectError(await h.json('GET', `/v1/esg/assessments/${a.body.assessment_id}`, { key: live.api_key }), 404, 'resource_not_found');
    const noScope = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('GET', `/v1/esg/assessments?nif=${ESG_EXAMPLES.leader.nif}`, { key: noScope.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('GET', `/v1/esg/assessments?nif=${ESG_EXAMPLES.leader.nif}&cursor=x`, { key: t.api_key }), 422, 'validation_failed');
  });
});

describe('GET /v1/esg/questionnaire', () => {
  test('27 indicators with the published fields, sectors A–U; the OpenAPI answers schema comes from the same table', async () => {
    const r = await h.json('GET', '/v1/esg/questionnaire', { key });
    expect(r.status).toBe(200);
    expect(r.body.indicators.length).toBe(27);
    expect(r.body.sectors.map((s: any) => s.code).join('')).toBe('ABCDEFGHIJKLMNOPQRSTU');
    expect(r.body.sectors.every((s: any) => s.name && s.name_pt && s.name !== s.name_pt)).toBe(true); // a Portuguese form needs no translation of its own
    expect(r.body.sectors.find((s: any) => s.code === 'C')).toEqual({ code: 'C', name: 'Manufacturing', name_pt: 'Indústrias transformadoras' });
    for (const i of r.body.indicators) {
      expect(['E', 'S', 'G']).toContain(i.pillar);
      expect(i.vsme_ref).toMatch(/^[BC]\d+$/);
      expect(i.question.en && i.question.pt).toBeTruthy();
    }
    const { body: doc } = await h.json('GET', '/openapi.json');
    const op = doc.paths['/v1/esg'].post;
    const schema = op.requestBody.content['application/json'].schema;
    const answers = schema.properties?.answers ?? doc.components.schemas[schema.$ref?.split('/').pop()]?.properties?.answers;
    expect(Object.keys(answers.properties).sort()).toEqual(r.body.indicators.map((i: any) => i.key).sort());
    expect(Object.keys(op.requestBody.content['application/json'].examples).sort()).toEqual(['developing_manufacturer', 'lagging_services', 'leader']);
    expect(doc.paths['/v1/esg-score'].post).toBeDefined();
  });
});

describe('the OpenAPI document states the rules the service enforces', () => {
  test('sector: the documented pattern accepts exactly the NACE codes the service accepts', async () => {
    const doc = (await h.json('GET', '/openapi.json')).body;
    const pattern = new RegExp(doc.components.schemas.EsgRequest.properties.sector.pattern);
    const codes = ['', 'a', 'c25', 'C', 'C1', 'C100', 'V', 'Z01'];
    for (const letter of 'ABCDEFGHIJKLMNOPQRSTU') for (let d = 0; d < 100; d++) codes.push(letter, `${letter}${String(d).padStart(2, '0')}`);
    for (const code of codes) expect(pattern.test(code), code).toBe(isValidSector(code));
  });

  test('every answers object the service accepts (validateAnswers, all the fast path checks) passes the documented answers schema', () => {
    // the fast path (plugins/fast-path.ts) leaves the compiled schema out; the Elysia route applies it
    const documented = TypeCompiler.Compile(answersSchema());
    const rng = mulberry32(4242);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
    // values of every kind, each indicator's valid ones and near misses alike
    const candidates = (i: (typeof INDICATORS)[number]): unknown[] => {
      const lo = i.min ?? -5;
      const hi = i.max ?? 1e6;
      const options = i.options ?? [];
      return [
        lo, hi, lo - 1, hi + 1, (lo + hi) / 2, Math.floor((lo + hi) / 2), 0.5, -0, 1e300,
        true, false, 'not_applicable', '', 'x', ...options, null, {}, [],
        options.slice(0, 2), options.slice(-1), [options[0], options[0]], [...options], [1], ['unknown'],
      ];
    };
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      const answers: Record<string, unknown> = {};
      for (const ind of INDICATORS) {
        if (rng() > 0.3) continue;
        // mostly values this indicator accepts (so that many objects pass), the rest anything
        const all = candidates(ind);
        const valid = all.filter((v) => !validateAnswers({ [ind.key]: v }).length);
        answers[ind.key] = rng() < 0.9 && valid.length ? pick(valid) : pick(all);
      }
      if (rng() < 0.05) answers.unknown_indicator = 1;
      if (validateAnswers(answers).length) continue;
      accepted++;
      expect(documented.Check(answers), JSON.stringify(answers)).toBe(true);
    }
    expect(accepted).toBeGreaterThan(100);
  });

  test('waste_recycled_pct "not_applicable" only with waste_total_t 0: in the document, and answered so', async () => {
    const doc = (await h.json('GET', '/openapi.json')).body;
    const answers = doc.components.schemas.EsgRequest.properties.answers;
    expect(answers.if.properties.waste_recycled_pct.const).toBe('not_applicable');
    expect(answers.then.properties.waste_total_t.const).toBe(0);
    const t = await h.tenant();
    const body = (total: number) => ({ ...ESG_EXAMPLES.developing_manufacturer, answers: { ...ESG_EXAMPLES.developing_manufacturer.answers, waste_total_t: total, waste_recycled_pct: 'not_applicable' } });
    const bad = expectError(await h.json('POST', '/v1/esg', { key: t.api_key, body: body(12) }), 422, 'validation_failed');
    expect(bad.fields.map((f: { path: string }) => f.path)).toEqual(['answers.waste_recycled_pct']);
    expect((await h.json('POST', '/v1/esg', { key: t.api_key, body: body(0) })).status).toBe(200);
  });
});
