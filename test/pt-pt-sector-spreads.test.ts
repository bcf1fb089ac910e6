/**
 * The sector-risk answer (titles, NACE section, sources) and the spreads index's methodology follow
 * Accept-Language as the score, ESG and decisions do: European Portuguese (pt-PT) on pt / pt-PT /
 * pt-BR, English otherwise; Content-Language and Vary: Accept-Language on the answer; the figures
 * the same in both; each request answered in its own language whatever was read from cache before.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { SectorRiskResponse, SpreadsResponse } from '../src/features/decision/model';
import { naceSectionTitle, SECTOR_TABLE, sectorSources } from '../src/features/sector-risk/table';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000);

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp();
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());

const get = (path: string, lang?: string, k = key) => h.json('GET', path, { key: k, headers: lang === undefined ? {} : { 'accept-language': lang } });
const varies = (res: { headers: Headers }) => (res.headers.get('vary') ?? '').split(',').map((v) => v.trim().toLowerCase());

/** INE's titles of the CAE Rev. 3 (= NACE Rev. 2) sections, AO90 spelling (O as the ESG sector list writes it) */
const INE_SECTIONS: Record<string, string> = {
  A: 'Agricultura, produção animal, caça, floresta e pesca',
  B: 'Indústrias extrativas',
  C: 'Indústrias transformadoras',
  D: 'Eletricidade, gás, vapor, água quente e fria e ar frio',
  E: 'Captação, tratamento e distribuição de água; saneamento, gestão de resíduos e despoluição',
  F: 'Construção',
  G: 'Comércio por grosso e a retalho; reparação de veículos automóveis e motociclos',
  H: 'Transportes e armazenagem',
  I: 'Alojamento, restauração e similares',
  J: 'Atividades de informação e de comunicação',
  K: 'Atividades financeiras e de seguros',
  L: 'Atividades imobiliárias',
  M: 'Atividades de consultoria, científicas, técnicas e similares',
  N: 'Atividades administrativas e dos serviços de apoio',
  O: 'Administração Pública e Defesa; Segurança Social obrigatória',
  P: 'Educação',
  Q: 'Atividades de saúde humana e apoio social',
  R: 'Atividades artísticas, de espetáculos, desportivas e recreativas',
  S: 'Outras atividades de serviços',
  T: 'Atividades das famílias empregadoras de pessoal doméstico e atividades de produção das famílias para uso próprio',
  U: 'Atividades dos organismos internacionais e outras instituições extraterritoriais',
};

describe('the sector table in Portuguese', () => {
  test('every row has a pt-PT title; sections are named as INE names them; no pre-AO90 or Brazilian spellings', () => {
    for (const [section, title] of Object.entries(INE_SECTIONS)) expect(naceSectionTitle(section, 'pt')).toBe(title);
    expect(naceSectionTitle('F', 'en')).toBe('Construction');
    // pre-AO90 (actividade, extractiva, electricidade, espectáculo) and Brazilian (econômico, eletrônico, aluguel, esporte, seção…) forms
    const wrong = /ctiv|xtract|lectr|spect[aá]c|ô|\b(aluguel|esporte|lavanderia|joalheria|seção|gerenciamento|ônibus|trem)\b/i;
    for (const row of SECTOR_TABLE.values()) {
      expect(row.title_pt.length).toBeGreaterThan(2);
      expect(row.title_pt).not.toMatch(wrong);
      expect(naceSectionTitle(row.nace.section, 'pt')).not.toMatch(wrong);
    }
    for (const s of sectorSources('pt')) expect(s).not.toMatch(wrong);
  });
});

describe('GET /v1/sector-risk/{naics} follows Accept-Language', () => {
  test('English by default, European Portuguese with pt-PT; the same figures; Content-Language and Vary', async () => {
    const en = await get('/v1/sector-risk/332');
    const pt = await get('/v1/sector-risk/332', 'pt-PT');
    for (const r of [en, pt]) {
      expect(r.status).toBe(200);
      expect(Value.Check(SectorRiskResponse, r.body)).toBe(true);
      expect(varies(r)).toContain('accept-language');
    }
    expect([en.headers.get('content-language'), pt.headers.get('content-language')]).toEqual(['en', 'pt-PT']);
    expect(en.body).toMatchObject({ title: 'Fabricated Metal Product Manufacturing', nace: { section: 'C', division: '25', section_title: 'Manufacturing' } });
    expect(pt.body).toMatchObject({ title: 'Fabricação de produtos metálicos, exceto máquinas e equipamentos', nace: { section: 'C', division: '25', section_title: 'Indústrias transformadoras' } });
    expect(en.body.sources[1]).toMatch(/^Assumption/);
    expect(pt.body.sources).toEqual([expect.stringContaining('ao nível da secção e da divisão'), expect.stringMatching(/^Pressuposto .*não é um valor publicado\.$/)]);
    // only the texts differ
    const figures = ({ title, sources, nace: { section_title, ...nace }, ...rest }: any) => ({ ...rest, nace });
    expect(figures(pt.body)).toEqual(figures(en.body));
  });

  test('a 6-digit industry answers with its subsector\'s Portuguese title; a sector with its own; the error stays as it was', async () => {
    expect((await get('/v1/sector-risk/722511', 'pt')).body).toMatchObject({
      matched_naics: '722',
      title: 'Restaurantes e estabelecimentos de bebidas',
      nace: { section: 'I', section_title: 'Alojamento, restauração e similares' },
    });
    expect((await get('/v1/sector-risk/23', 'pt-PT')).body).toMatchObject({ title: 'Construção', nace: { section: 'F', section_title: 'Construção' }, risk_level: 'elevated' });
    expect((await get('/v1/sector-risk/5417', 'pt-PT')).body).toMatchObject({ title: 'Investigação científica e desenvolvimento', nace: { section: 'M', section_title: 'Atividades de consultoria, científicas, técnicas e similares' } });
    expect((await get('/v1/sector-risk/92', 'pt-PT')).body.nace.section_title).toBe(INE_SECTIONS.O);
    expectError(await get('/v1/sector-risk/99', 'pt-PT'), 404, 'sector_not_found');
    expectError(await get('/v1/sector-risk/ab', 'pt-PT'), 422, 'validation_failed');
  });

  test('negotiation as the other localised routes: pt, pt-BR and a higher q choose Portuguese; fr or a higher-q English choose English', async () => {
    const cases: [string, string, string][] = [
      ['pt', 'pt-PT', 'Construção'],
      ['pt-BR', 'pt-PT', 'Construção'],
      ['en;q=0.4, pt-PT;q=0.9', 'pt-PT', 'Construção'],
      ['pt;q=0.3, en', 'en', 'Construction'],
      ['fr-FR', 'en', 'Construction'],
      ['en-GB', 'en', 'Construction'],
    ];
    for (const [header, language, title] of cases) {
      const r = await get('/v1/sector-risk/23', header);
      expect([header, r.headers.get('content-language'), r.body.title]).toEqual([header, language, title]);
    }
  });

  test('each request in its own language, one after the other on the same tenant (companies_scored counted alike)', async () => {
    const t = await h.tenant();
    await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000023' } }); // sector C
    const seen = [];
    for (const lang of ['pt-PT', undefined, 'pt-PT', 'en', 'pt']) {
      const r = await get('/v1/sector-risk/33', lang, t.api_key);
      seen.push([r.headers.get('content-language'), r.body.nace.section_title, r.body.companies_scored]);
    }
    const pt = ['pt-PT', 'Indústrias transformadoras', 1];
    const en = ['en', 'Manufacturing', 1];
    expect(seen).toEqual([pt, en, pt, en, pt]);
  });
});

describe('GET /v1/index/spreads: the methodology follows Accept-Language', () => {
  test('English by default, Portuguese with pt-PT; the same spreads; Content-Language and Vary', async () => {
    const en = await get('/v1/index/spreads?tier=B');
    const pt = await get('/v1/index/spreads?tier=B', 'pt-PT');
    for (const r of [en, pt]) {
      expect(r.status).toBe(200);
      expect(Value.Check(SpreadsResponse, r.body)).toBe(true);
      expect(varies(r)).toContain('accept-language');
    }
    expect([en.headers.get('content-language'), pt.headers.get('content-language')]).toEqual(['en', 'pt-PT']);
    expect(en.body.methodology).toMatch(/^Annual spread = expected loss \(PD × LGD\) \+ 10 % cost of capital/);
    expect(pt.body.methodology).toMatch(/^Spread anual = perda esperada \(PD × LGD\) \+ custo de capital de 10 % sobre o capital IRB \(CRR, artigo 153\.º, n\.º 1/);
    expect(pt.body.methodology).toContain('Nunca inferior para um nível pior ou um prazo mais longo.');
    expect(pt.body.methodology).not.toMatch(/\d\.\d/); // a decimal comma, were there a decimal
    const { methodology: _e, as_of: _a, ...enRest } = en.body;
    const { methodology: _p, as_of: _b, ...ptRest } = pt.body;
    expect(ptRest).toEqual(enRest);
    expect(pt.body.methodology_url).toBe(en.body.methodology_url);
  });

  test('the cached policy is answered in each request\'s language, before and after a policy change', async () => {
    const t = await h.tenant();
    const path = '/v1/index/spreads?tier=A&term_days=30&modality=non_recourse';
    const run = async () => {
      const out = [];
      for (const lang of ['pt-PT', undefined, 'pt', 'en-GB']) {
        const r = await get(path, lang, t.api_key);
        out.push([r.headers.get('content-language'), r.body.methodology.split(' ')[0], r.body.spreads[0].spread_bps]);
      }
      return out;
    };
    const before = await run();
    const bps = before[0]![2];
    expect(before).toEqual([['pt-PT', 'Spread', bps], ['en', 'Annual', bps], ['pt-PT', 'Spread', bps], ['en', 'Annual', bps]]);
    expect((await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { margin_bps: 150 } })).status).toBe(200);
    const after = await run();
    const bps2 = after[0]![2];
    expect(bps2).toBe(bps + 100);
    expect(after).toEqual([['pt-PT', 'Spread', bps2], ['en', 'Annual', bps2], ['pt-PT', 'Spread', bps2], ['en', 'Annual', bps2]]);
  });
});

describe('OpenAPI', () => {
  test('both routes document Accept-Language, Content-Language and Vary as the other localised routes do', async () => {
    const doc = (await h.json('GET', '/openapi.json')).body;
    const score = doc.paths['/v1/score'].post;
    const scoreLang = score.parameters.find((p: any) => p.name === 'Accept-Language');
    for (const path of ['/v1/sector-risk/{naics}', '/v1/index/spreads']) {
      const op = doc.paths[path].get;
      expect(op.parameters.find((p: any) => p.name === 'Accept-Language')).toEqual(scoreLang);
      expect(op.responses['200'].headers['Content-Language']).toEqual(score.responses['200'].headers['Content-Language']);
      expect(op.responses['200'].headers.Vary).toEqual(score.responses['200'].headers.Vary);
    }
    const nace = doc.paths['/v1/sector-risk/{naics}'].get.responses['200'].content['application/json'].schema;
    expect(JSON.stringify(nace)).toContain('section_title');
  });
});
