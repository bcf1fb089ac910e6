/**
 * AML screening (issue 19): the UN consolidated list as published, an EU FSF 1.1 file in the
 * published shape, loading (versioned; a bad file changes nothing), matching (typos, reordered
 * tokens, missing diacritics, aliases; common Portuguese names must not match) with precision and
 * recall on a labelled set, and POST /v1/aml/screen with its errors, scope and tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { and, eq, gt } from 'drizzle-orm';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEuList, parseUnList, ListFormatError, type ListEntry } from '../src/features/aml/lists';
import { buildIndex, jaroWinkler, nameSimilarity, screen, spelling, tokens } from '../src/features/aml/matcher';
import { ScreenResponse } from '../src/features/aml/model';
import { amlService, loadConfiguredLists } from '../src/features/aml';
import { expectError, makeApp, ROOT, runCli, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const UN_FILE = join(ROOT, 'fixtures/sanctions/un_consolidated_list.xml');
const chunksOf = (text: string) => (async function* () {
  for (let i = 0; i < text.length; i += 1000) yield text.slice(i, i + 1000);
})();

/** An EU FSF 1.1 export in the published shape (elements and attributes as in the real file). */
export const EU_SAMPLE = `<?xml version="1.0" encoding="UTF-8"?>
<export xmlns="http://eu.europa.ec/fpi/fsd/export" generationDate="2026-11-20T10:15:00.000+01:00" globalFileId="153413">
  <sanctionEntity designationDetails="" unitedNationId="" euReferenceNumber="EU.27.28" logicalId="13">
    <regulation regulationType="regulation" organisationType="commission" publicationDate="2002-05-29" entryIntoForceDate="2002-05-30" numberTitle="881/2002 (OJ L139)" programme="TAQA" logicalId="1"/>
    <subjectType code="person" classificationCode="P"/>
    <nameAlias firstName="Ahmad" middleName="" lastName="Al-Khalifa" wholeName="Ahmad Al-Khalifa" function="" gender="M" title="" nameLanguage="" strong="true" regulationLanguage="en" logicalId="17"/>
    <nameAlias firstName="" middleName="" lastName="" wholeName="Abu Yusuf" function="" gender="M" title="" nameLanguage="" strong="false" regulationLanguage="en" logicalId="18"/>
    <citizenship region="" countryIso2Code="SY" countryDescription="SYRIAN ARAB REPUBLIC" regulationLanguage="en" logicalId="19"/>
    <birthdate circa="false" calendarType="GREGORIAN" city="Aleppo" zipCode="" birthdate="1968-04-02" dayOfMonth="2" monthOfYear="4" year="1968" region="" place="" countryIso2Code="SY" countryDescription="SYRIAN ARAB REPUBLIC" regulationLanguage="en" logicalId="20"/>
  </sanctionEntity>
  <sanctionEntity designationDetails="" unitedNationId="" euReferenceNumber="EU.8213.77" logicalId="8213" designationDate="2022-03-15">
    <remark>Shipping company.</remark>
    <regulation regulationType="regulation" organisationType="council" publicationDate="2022-03-15" entryIntoForceDate="2022-03-15" numberTitle="2022/427 (OJ L87)" programme="RUS" logicalId="8300"/>
    <subjectType code="enterprise" classificationCode="E"/>
    <nameAlias firstName="" middleName="" lastName="" wholeName="Sovfracht Shipping Joint Stock Company" function="" gender="" title="" nameLanguage="" strong="true" regulationLanguage="en" logicalId="8301"/>
    <nameAlias firstName="" middleName="" lastName="" wholeName="АО Совфрахт" function="" gender="" title="" nameLanguage="RU" strong="true" regulationLanguage="en" logicalId="8302"/>
    <address city="Moscow" street="Lesnaya 5" poBox="" zipCode="125047" region="" place="" asAtListingTime="true" countryIso2Code="RU" countryDescription="RUSSIAN FEDERATION" regulationLanguage="en" logicalId="8303"/>
  </sanctionEntity>
  <sanctionEntity designationDetails="" unitedNationId="" euReferenceNumber="EU.9001.12" logicalId="9001" designationDate="2023-02-25">
    <regulation regulationType="regulation" organisationType="council" publicationDate="2023-02-25" entryIntoForceDate="2023-02-25" numberTitle="2023/427" programme="BLR" logicalId="9002"/>
    <subjectType code="person" classificationCode="P"/>
    <nameAlias firstName="Olga" middleName="Ivanovna" lastName="Petrova" wholeName="Olga Ivanovna Petrova" function="Minister" gender="F" title="" nameLanguage="" strong="true" regulationLanguage="en" logicalId="9003"/>
    <citizenship region="" countryIso2Code="BY" countryDescription="BELARUS" regulationLanguage="en" logicalId="9004"/>
    <birthdate circa="false" calendarType="GREGORIAN" city="" zipCode="" year="1971" region="" place="" countryIso2Code="BY" countryDescription="BELARUS" regulationLanguage="en" logicalId="9005"/>
  </sanctionEntity>
</export>`;

let un: ListEntry[] = [];
beforeAll(async () => {
  await parseUnList(Bun.file(UN_FILE).stream() as never, (e) => void un.push(e));
});

describe('list formats', () => {
  test('the UN consolidated list as published: every entry, names, aliases, births, nationalities', () => {
    expect(un.length).toBe(1003);
    expect(un.filter((e) => e.entry_type === 'person').length).toBe(730);
    expect(un.filter((e) => e.entry_type === 'organisation').length).toBe(273);
    const badege = un.find((e) => e.entry_id === 'CDi.001')!;
    expect(badege).toMatchObject({ entry_type: 'person', programme: 'DRC', listed_on: '2012-12-31', countries: ['CD'], births: [{ year: 1971 }] });
    expect(badege.names[0]).toEqual({ name: 'ERIC BADEGE', kind: 'primary', quality: null });
    // TYPE_OF_DATE APPROXIMATELY is kept (108 entries of the sample)
    expect(un.filter((e) => e.births.some((b) => b.approximate)).length).toBe(108);
    const kakolele = un.find((e) => e.entry_id === 'CDi.002')!;
    expect(kakolele.names.map((n) => n.name)).toContain('FRANK KAKORERE');
    const alqaida = un.find((e) => e.entry_id === 'QDe.004')!;
    expect(alqaida.entry_type).toBe('organisation');
    expect(alqaida.names.some((n) => n.kind === 'original_script')).toBe(true);
  });

  test('an EU FSF 1.1 file: reference, programme, subject type, strong and weak aliases, citizenship, birth date', async () => {
    const got: ListEntry[] = [];
    const head = await parseEuList(chunksOf(EU_SAMPLE), (e) => void got.push(e));
    expect(head.generated_at).toBe('2026-11-20T09:15:00.000Z');
    expect(got.map((e) => e.entry_id)).toEqual(['EU.27.28', 'EU.8213.77', 'EU.9001.12']);
    expect(got[0]).toMatchObject({ entry_type: 'person', programme: 'TAQA', countries: ['SY'], births: [{ date: '1968-04-02', year: 1968 }] });
    expect(got[0]!.names).toEqual([
      { name: 'Ahmad Al-Khalifa', kind: 'primary', quality: 'strong' },
      { name: 'Abu Yusuf', kind: 'alias', quality: 'weak' },
    ]);
    expect(got[1]).toMatchObject({ entry_type: 'organisation', programme: 'RUS', countries: ['RU'], listed_on: '2022-03-15' });
    expect(got[2]!.births).toEqual([{ date: null, year: 1971, from_year: null, to_year: null }]);
  });

  test('a file that is not well-formed, or not the expected list, is refused', async () => {
    for (const [parse, text] of [
      [parseUnList, '<CONSOLIDATED_LIST dateGenerated="2026-01-01"><INDIVIDUALS><INDIVIDUAL>'],
      [parseUnList, EU_SAMPLE],
      [parseEuList, await Bun.file(UN_FILE).text()],
      [parseEuList, '<export generationDate="2026-01-01"><sanctionEntity euReferenceNumber="EU.1"></sanctionEntity></export>'],
      [parseEuList, 'not xml at all'],
    ] as const)
      await expect(parse(chunksOf(text), () => {})).rejects.toBeInstanceOf(ListFormatError);
  });
});

describe('matching', () => {
  test('normalisation and Jaro–Winkler', () => {
    expect(tokens('  José  da Conceição-Gonçalves, Lda. ')).toEqual(['jose', 'conceicao', 'goncalves']);
    expect(tokens("Al Qa'ida")).toEqual(['al', 'qaida']);
    // company forms spelt in letters are forms, not one-letter names
    expect(tokens('Banco Espírito Santo, S.A.')).toEqual(['banco', 'espirito', 'santo']);
    expect(tokens('Acme S. A.')).toEqual(['acme']);
    expect(tokens('Fiat S.p.A.')).toEqual(['fiat']);
    expect(tokens('Shell B.V.')).toEqual(['shell']);
    expect(tokens('Empresa Exemplo, L.da')).toEqual(['empresa', 'exemplo']);
    // initials stay initials
    expect(tokens('Maria L. da Silva')).toEqual(['maria', 'l', 'silva']);
    expect(tokens('J. R. Tolkien')).toEqual(['j', 'r', 'tolkien']);
    // letters that spell a form are initials unless the form ends the name
    expect(tokens('A. G. Rahman')).toEqual(['a', 'g', 'rahman']);
    expect(tokens('S. A. Khan')).toEqual(['s', 'a', 'khan']);
    expect(tokens('Acme S. A. Ltd')).toEqual(['acme']);
    // so a company screened with its form scores as without it (the letters used to count as unmatched)
    expect(nameSimilarity(tokens('Acme Trading, S.A.'), tokens('ACME TRADING')).score).toBe(1);
    // every script transliterated; invisible format characters do not split a token
    expect(tokens('Ерик Бадеге')).toEqual(['erik', 'badege']);
    expect(tokens('Sаddаm Hussеin')).toEqual(['saddam', 'hussein']); // Cyrillic а and е inside Latin words
    expect(tokens('Eric Bad\u00adege Ba\u200bde\u200dge\u2060x')).toEqual(['eric', 'badege', 'badegex']);
    expect(tokens('Łukasz Øster-Straße 😀')).toEqual(['lukasz', 'oster', 'strasse']);
    expect(tokens('Ｅｒｉｃ Mu’ammar')).toEqual(['eric', 'muammar']);
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.9611, 4);
    expect(jaroWinkler('dwayne', 'duane')).toBeCloseTo(0.84, 2);
    expect(jaroWinkler('abc', 'abc')).toBe(1);
    expect(jaroWinkler('abc', 'xyz')).toBe(0);
  });

  test('an alias the list calls low-quality (UN) or weak (EU) is at most a potential match, and says so', () => {
    const index = buildIndex(un);
    // "Chairman" is a low-quality alias of CDi.002 (nicknames and single common words)
    const [chairman] = screen(index, { name: 'Chairman', type: 'any', min_score: 0.85 });
    expect(chairman).toMatchObject({ matched_name: 'Chairman', score: 0.9, match_type: 'alias', explanation: { name_score: 0.9, alias_quality: 'low' } });
    expect(chairman!.explanation.summary).toContain('low alias');
    // with every attribute agreeing it still stays below a match (0.97)
    const best = screen(index, { name: 'Chairman', type: 'person', country: 'CD', min_score: 0.85 })[0]!;
    expect(best.score).toBeLessThan(0.97);
    // a good alias and a primary name are as they were
    expect(screen(index, { name: 'Laurent Nkundabatware', type: 'any', min_score: 0.85 })[0]).toMatchObject({ score: 1, match_type: 'alias', explanation: { alias_quality: 'good' } });
    expect(screen(index, { name: 'Eric Badege', type: 'any', min_score: 0.85 })[0]).toMatchObject({ score: 1, match_type: 'exact', explanation: { alias_quality: null } });
    // a person's name of one word is a common given name whatever the list's quality ("Hassan" is a
    // good alias of QDi.319): at most a potential match
    const hassan = screen(index, { name: 'Hassan', type: 'any', min_score: 0.85 });
    expect(hassan.length).toBeGreaterThan(0);
    expect(Math.max(...hassan.map((m) => m.score))).toBeLessThan(0.97);
    expect(hassan.find((m) => m.entry.entry_id === 'QDi.319')!.explanation.summary).toContain('(one word)');
  });

  test('an ALIAS_NAME holding two names ("A; B") is two aliases, each matched exactly', () => {
    const entry = un.find((e) => e.names.some((n) => n.name === 'Syed Husain Husaini'))!;
    expect(entry.names.map((n) => n.name)).toEqual(expect.arrayContaining(['Syed Husain Husaini', 'Syed Husein Huseini']));
    expect(un.some((e) => e.names.some((n) => n.name.includes(';')))).toBe(false);
    const [m] = screen(buildIndex(un), { name: 'Syed Husein Huseini', type: 'any', min_score: 0.9 });
    expect(m).toMatchObject({ entry: { entry_id: entry.entry_id }, score: 1, match_type: 'alias' });
  });

  test('two whole birth dates agree only on the same day; a year alone within a year', () => {
    const person: ListEntry = { list: 'un', entry_id: 'T.1', entry_type: 'person', names: [{ name: 'Ivan Petrovich Sidorov', kind: 'primary', quality: null }], births: [{ date: '1957-04-15', year: 1957, from_year: null, to_year: null }], countries: [], programme: null, listed_on: null };
    const index = buildIndex([person]);
    const at = (birth_date: string) => screen(index, { name: 'Ivan Petrovich Sidorov', type: 'person', birth_date, min_score: 0.5 })[0]!.explanation.attributes.birth_date;
    expect(at('1957-04-15')).toBe('agrees');
    expect(at('1957-12-31')).toBe('disagrees');
    expect(at('1957')).toBe('agrees');
    expect(at('1958')).toBe('agrees');
    expect(at('1960')).toBe('disagrees');
    // a date the list calls approximate agrees by its year (within one)
    const approx = buildIndex([{ ...person, births: [{ ...person.births[0]!, approximate: true }] }]);
    const atApprox = (birth_date: string) => screen(approx, { name: 'Ivan Petrovich Sidorov', type: 'person', birth_date, min_score: 0.5 })[0]!.explanation.attributes.birth_date;
    expect(atApprox('1957-12-31')).toBe('agrees');
    expect(atApprox('1960-01-01')).toBe('disagrees');
  });

  test('precision and recall on a labelled set (typos, reordered tokens, lower case, aliases; Portuguese names)', () => {
    const index = buildIndex(un);
    const persons = un.filter((e) => e.entry_type === 'person' && tokens(e.names[0]!.name).length >= 2);
    const orgs = un.filter((e) => e.entry_type === 'organisation' && tokens(e.names[0]!.name).length >= 2);
    const picked = [...persons.filter((_, i) => i % 29 === 0), ...orgs.filter((_, i) => i % 13 === 0)];
    const typo = (t: string) => (t.length > 4 ? t.slice(0, 2) + t[3] + t[2] + t.slice(4) : t); // swap two letters
    const positives: { query: string; id: string; type: 'person' | 'organisation' }[] = [];
    for (const e of picked) {
      const t = tokens(e.names[0]!.name);
      const longest = t.reduce((a, b) => (b.length > a.length ? b : a));
      positives.push({ query: [...t].reverse().join(' '), id: e.entry_id, type: e.entry_type });
      positives.push({ query: t.map((x) => (x === longest ? typo(x) : x)).join(' '), id: e.entry_id, type: e.entry_type });
      const alias = e.names.find((n) => n.kind === 'alias' && tokens(n.name).length >= 2);
      if (alias) positives.push({ query: alias.name.toLowerCase(), id: e.entry_id, type: e.entry_type });
    }
    const negatives = [
      'João Silva', 'Maria Fernandes', 'José Manuel Pereira', 'Ana Rita Costa', 'Rui Pedro Santos', 'Catarina Sousa Lopes', 'Miguel Ângelo Ferreira',
      'Francisco Oliveira Martins', 'Teresa Gonçalves', 'Paulo Rodrigues Almeida', 'Helena Carvalho', 'Pedro Nuno Marques', 'Joana Ribeiro',
      'António Mendes Nunes', 'Inês Moreira', 'Carlos Alberto Correia', 'Sofia Teixeira', 'Manuel Azevedo Pinto', 'Isabel Simões', 'Marta Fonseca',
      'Metalúrgica do Vouga, Lda.', 'Construções Ribeira & Filhos, S.A.', 'Transportes Rocha Unipessoal Lda', 'Panificadora Central do Minho',
      'Vinhos do Douro Sociedade Agrícola', 'Cortiças Amorim', 'Farmácia Avenida', 'Banco Comercial Português', 'Sonae Distribuição', 'Têxteis Lis',
    ].map((query) => ({ query }));
    let tp = 0;
    let fn = 0;
    const missed: string[] = [];
    for (const p of positives) {
      const m = screen(index, { name: p.query, type: p.type, min_score: 0.85 });
      if (m.some((x) => x.entry.entry_id === p.id)) tp++;
      else (fn++, missed.push(p.query));
    }
    let fp = 0;
    const falsePositives: string[] = [];
    for (const n of negatives) {
      const m = screen(index, { name: n.query, type: 'any', min_score: 0.85 });
      if (m.length) (fp++, falsePositives.push(`${n.query} → ${m[0]!.matched_name} ${m[0]!.score}`));
    }
    const recall = tp / (tp + fn);
    const precision = tp / (tp + fp);
    console.log(`[aml labelled set] positives ${positives.length}, negatives ${negatives.length}: recall ${recall.toFixed(3)}, precision ${precision.toFixed(3)}, false positives ${fp}; missed ${JSON.stringify(missed.slice(0, 5))}; fp ${JSON.stringify(falsePositives)}`);
    expect(positives.length).toBeGreaterThanOrEqual(60);
    expect(recall).toBeGreaterThanOrEqual(0.9);
    expect(fp).toBe(0);
  });

  test('a list name found whole within a longer query is a potential match, explained; a part of it is not', () => {
    const index = buildIndex(un);
    const top = (name: string, o: Partial<Parameters<typeof screen>[1]> = {}) => screen(index, { name, type: 'any', min_score: 0.85, ...o })[0];
    const middle = top('Eric Mutombo Badege', { type: 'person', birth_date: '1971', country: 'CD' })!;
    expect(middle).toMatchObject({ entry: { entry_id: 'CDi.001' }, score: 0.95, explanation: { unmatched_tokens: ['mutombo'], name_score: 0.9 } });
    expect(middle.explanation.summary).toContain('found whole within a longer name');
    for (const name of ['Eric Badege Junior', 'Eric Badege Eric Badege', 'Fundação Saddam Hussein Al-Tikriti']) {
      const m = top(name)!;
      expect({ name, score: m.score }).toEqual({ name, score: 0.9 });
    }
    // the list name only in part, or a common name beside one list token: not found
    expect(top('Eric Mutombo')).toBeUndefined();
    expect(top('Maria Badege Silva')).toBeUndefined();
    // invisible characters and look-alike letters do not get a listed name past the screen
    for (const name of ['Eric Bad\u00adege', 'Eric Bade\u200dge', 'Sa\u200bddam Hus\u200bsein Al-Tikriti', 'Sаddаm Hussеin Al-Tikriti']) expect({ name, score: top(name)?.score }).toEqual({ name, score: 1 });
    expect(top('Ерик Бадеге')).toMatchObject({ entry: { entry_id: 'CDi.001' } });
    // transliteration's variants of one sound compare as one spelling (shown as typed)
    expect(spelling('khuseyn')).toBe(spelling('hussein'));
    expect(nameSimilarity(tokens('Mohammed Aly'), tokens('MOHAMED ALI')).score).toBe(1);
    const cyrillic = top('Саддам Хусейн')!;
    expect(cyrillic).toMatchObject({ entry: { entry_id: 'IQi.001' }, explanation: { tokens: [{ query: 'saddam', matched: 'saddam', similarity: 1 }, { query: 'khuseyn', matched: 'hussein', similarity: 1 }] } });
  });

  test('a list name made only of tokens many entries share is a potential match, unless a birth date or country agrees', () => {
    const index = buildIndex(un);
    expect(index.common.has('ali')).toBe(true);
    expect(index.common.has('badege')).toBe(false);
    const common = screen(index, { name: 'Ali Mohammed', type: 'any', min_score: 0.85 }).find((m) => m.entry.entry_id === 'CFi.010')!;
    expect(common).toMatchObject({ score: 0.95, explanation: { name_score: 1, summary: expect.stringContaining('common names only, nothing else agreeing') } });
    const year = common.entry.births.find((b) => b.year !== null)?.year;
    expect(year).toBeDefined();
    const corroborated = screen(index, { name: 'Ali Mohammed', type: 'person', birth_date: String(year), min_score: 0.85 }).find((m) => m.entry.entry_id === 'CFi.010')!;
    expect(corroborated.score).toBeGreaterThanOrEqual(0.97);
    // a name with a rare token is a match on its own
    expect(screen(index, { name: 'Eric Badege', type: 'any', min_score: 0.85 })[0]!.score).toBe(1);
  });

  test('birth date and type move the score; a disagreeing birth year turns a match into a potential one', () => {
    const index = buildIndex(un);
    const plain = screen(index, { name: 'Eric Badege', type: 'person', min_score: 0.5 })[0]!;
    const agrees = screen(index, { name: 'Eric Badege', type: 'person', birth_date: '1971', min_score: 0.5 })[0]!;
    const disagrees = screen(index, { name: 'Eric Badege', type: 'person', birth_date: '1985-03-01', min_score: 0.5 })[0]!;
    expect(plain.score).toBe(1);
    expect(agrees.explanation.attributes.birth_date).toBe('agrees');
    expect(disagrees.score).toBeCloseTo(0.85, 5);
    expect(disagrees.explanation.attributes.birth_date).toBe('disagrees');
    // the other type lowers an identical name to a potential match, never to clear
    const otherType = screen(index, { name: 'Eric Badege', type: 'organisation', min_score: 0.85 })[0]!;
    expect(otherType.score).toBeCloseTo(0.9, 5);
    expect(otherType.explanation.attributes.type).toBe('disagrees');
  });
});

describe('POST /v1/aml/screen', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
    await loadConfiguredLists(h.ctx); // the UN sample shipped with the service (the default source)
  });
  afterAll(() => h.close());
  const screenReq = (body: unknown, k = key) => h.json('POST', '/v1/aml/screen', { key: k, body });

  test('the list\'s very name is reviewed whatever attributes disagree: a potential match, not cleared', async () => {
    // KPi.056, JANG SONG CHOL, born 1967-03-12, DPRK (a tenant of its own: the next test counts its screenings)
    const own = (await h.tenant()).api_key;
    const screenReq = (body: unknown) => h.json('POST', '/v1/aml/screen', { key: own, body });
    const r = await screenReq({ name: 'Jang Song Chol', type: 'person', birth_date: '1990-01-01', nationality: 'PT' });
    expect(r.body.status).toBe('potential_match');
    expect(r.body.matches[0]).toMatchObject({ entry_id: 'KPi.056', score: 0.85, match_type: 'exact' });
    expect(r.body.matches[0].explanation.attributes).toMatchObject({ birth_date: 'disagrees', country: 'disagrees' });
    expect(r.body.matches[0].explanation.summary).toContain('reviewed, whatever attributes disagree');
    // the same words in another order are the same name
    const reordered = await screenReq({ name: 'Chol Song Jang', type: 'person', birth_date: '1990-01-01', nationality: 'PT' });
    expect(reordered.body.status).toBe('potential_match');
    expect(reordered.body.matches[0]).toMatchObject({ entry_id: 'KPi.056', score: 0.85 });
    // a near spelling of it (one letter: every token paired, a rare one identical) is reviewed as well
    const near = await screenReq({ name: 'Jang Song Chul', type: 'person', birth_date: '1990-01-01', nationality: 'PT' });
    expect(near.body.status).toBe('potential_match');
    expect(near.body.matches[0]).toMatchObject({ entry_id: 'KPi.056', score: 0.85, match_type: 'fuzzy' });
    expect(near.body.matches[0].explanation.summary).toContain('a near spelling of the name: reviewed, whatever attributes disagree');
    // a name only loosely similar, with the same attributes disagreeing, is still cleared by them
    expect((await screenReq({ name: 'Jang Sang Chul', type: 'person', birth_date: '1990-01-01', nationality: 'PT' })).body.status).toBe('clear');
    // and the same name with its attributes agreeing is a match
    expect((await screenReq({ name: 'Jang Song Chol', type: 'person', birth_date: '1967-03-12', nationality: 'KP' })).body.status).toBe('match');
  });

  test('a listed person with a typo and missing diacritics: match explained; a Portuguese name: clear; stored and readable', async () => {
    const r = await screenReq({ name: 'Erik Badege', type: 'person', birth_date: '1971', nationality: 'CD', customer_reference: 'onb-1' });
    expect(r.status).toBe(200);
    expect(Value.Check(ScreenResponse, r.body)).toBe(true);
    expect(r.body.status).not.toBe('clear');
    const m = r.body.matches[0];
    expect(m).toMatchObject({ list: 'un', entry_id: 'CDi.001', matched_name: 'ERIC BADEGE', entry_type: 'person', match_type: 'fuzzy', programme: 'DRC', listed_on: '2012-12-31' });
    expect(m.explanation.attributes).toEqual({ birth_date: 'agrees', country: 'agrees', type: 'agrees' });
    expect(m.explanation.tokens).toContainEqual({ query: 'erik', matched: 'eric', similarity: expect.any(Number) });
    expect(r.body.lists).toEqual([{ name: 'un', generated_at: '2026-02-27T00:00:09.554Z', loaded_at: expect.any(String), entries: 1003 }]);
    expect(r.body.screening_id).toMatch(/^scr_/);
    const clear = await screenReq({ name: 'João Gonçalves Silva', type: 'person' });
    expect(clear.body).toMatchObject({ status: 'clear', matches: [] });
    // diacritics and case added, tokens reordered: still the listed person
    const accented = await screenReq({ name: 'Badége, Éric', type: 'person' });
    expect(accented.body.matches[0]).toMatchObject({ entry_id: 'CDi.001', score: 1 });
    const exact = await screenReq({ name: 'AL-QAIDA' });
    expect(exact.body.status).toBe('match');
    expect(exact.body.matches[0]).toMatchObject({ entry_id: 'QDe.004', match_type: 'exact', score: 1 });
    const got = await h.json('GET', `/v1/aml/screenings/${r.body.screening_id}`, { key });
    expect(got.body).toEqual(r.body);
    const matches = await h.json('GET', '/v1/aml/screenings?status=match', { key });
    // status filter: the exact name and the typo with agreeing birth year and nationality are matches; the Portuguese name is not
    expect(matches.body.data.map((s: any) => s.screening_id).sort()).toEqual([exact.body.screening_id, accented.body.screening_id, r.body.screening_id].sort());
    expect((await h.json('GET', '/v1/aml/screenings?status=clear', { key })).body.data.map((s: any) => s.screening_id)).toEqual([clear.body.screening_id]);
  });

  test('a low-quality alias alone is a potential match; a screening stored before alias_quality reads with it as null', async () => {
    const low = await screenReq({ name: 'Chairman' });
    expect(low.body).toMatchObject({ status: 'potential_match', matches: [{ matched_name: 'Chairman', score: 0.9, explanation: { alias_quality: 'low' } }] });
    const { db, t } = h.ctx.database;
    const { eq } = await import('drizzle-orm');
    const [row] = await db.select().from(t.amlScreenings).where(eq(t.amlScreenings.id, low.body.screening_id));
    const old = JSON.parse(row!.response);
    delete old.matches[0].explanation.alias_quality;
    await db.update(t.amlScreenings).set({ response: JSON.stringify(old) }).where(eq(t.amlScreenings.id, low.body.screening_id));
    const got = await h.json('GET', `/v1/aml/screenings/${low.body.screening_id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body.matches[0].explanation.alias_quality).toBeNull();
    const listed = await h.json('GET', '/v1/aml/screenings?status=potential_match', { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((x: any) => x.screening_id === low.body.screening_id).matches[0].explanation.alias_quality).toBeNull();
  });

  test('errors: missing or empty name, a name of punctuation, bad min_score, birth_date, country, an unknown list', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '!!! ---' }, 'name'],
      [{ name: 'x', min_score: 1.5 }, 'min_score'],
      [{ name: 'Eric Badege', min_score: 0.99 }, 'min_score'], // above a match's score: a match would go unreported
      [{ name: 'Lda' }, 'name'], // titles, connectives and company forms alone name no one
      [{ name: 'S.A.' }, 'name'],
      [{ name: 'Dr. da' }, 'name'],
      [{ name: 'Eric Badege', birth_date: '2199' }, 'birth_date'], // born after today
      [{ name: 'Eric Badege', birth_date: '2199-12-31' }, 'birth_date'],
      [{ name: 'x', birth_date: '71' }, 'birth_date'],
      [{ name: 'x', nationality: 'Portugal' }, 'nationality'],
      [{ name: 'Erik Badege', nationality: 'XX' }, 'nationality'], // two letters, but no country
      [{ name: 'Erik Badege', type: 'organisation', country: 'QQ' }, 'country'],
      [{ name: 'X' }, 'name'], // one letter identifies no one (the UN alias "E. X. Co." is x once its noise goes)
      [{ name: 'Mr. X' }, 'name'],
      [{ name: 'x', type: 'company' }, 'type'],
      [{ name: 'Erik Badege', lists: ['ofac'] }, 'lists'],
    ];
    for (const [body, path] of cases) expect(expectError(await screenReq(body), 422, 'validation_failed').fields.map((f: any) => f.path)).toContain(path);
    expect(expectError(await screenReq({ name: 'Erik Badege', nationality: 'XX' }), 422, 'validation_failed').fields).toEqual([{ path: 'nationality', message: 'must be an ISO 3166-1 alpha-2 country code (e.g. PT)' }]);
    // lower case is a code too, and a name of two letters is screened
    for (const body of [{ name: 'Erik Badege', nationality: 'pt' }, { name: 'Xu' }]) expect((await screenReq(body)).status).toBe(200);
    expectError(await h.json('GET', '/v1/aml/screenings/scr_00000000-0000-7000-8000-000000000000', { key }), 404, 'resource_not_found');
    expectError(await h.json('GET', '/v1/aml/screenings?status=maybe', { key }), 422, 'validation_failed');
  });

  test('scope compliance; another tenant neither reads nor lists the screenings', async () => {
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await screenReq({ name: 'Eric Badege' }, narrow.api_key), 403, 'insufficient_scope');
    const a = await h.tenant();
    const b = await h.tenant();
    const s = await screenReq({ name: 'Eric Badege' }, a.api_key);
    expectError(await h.json('GET', `/v1/aml/screenings/${s.body.screening_id}`, { key: b.api_key }), 404, 'resource_not_found');
    expect((await h.json('GET', '/v1/aml/screenings', { key: b.api_key })).body.data).toEqual([]);
  });

  test('loading: an EU list adds its entries; a malformed file is refused and the previous version stays active', async () => {
    const service = amlService(h.ctx);
    const loaded = await service.loadList('eu', chunksOf(EU_SAMPLE), 'test');
    expect(loaded).toMatchObject({ list: 'eu', entries: 3, persons: 2, organisations: 1, names: 5 });
    await Bun.sleep(1100); // other service instances see the new version within a second
    // (her given name and surname are common words: without the patronymic, a potential match with birth year and nationality agreeing)
    const r = await screenReq({ name: 'Petrova Olga', type: 'person', birth_date: '1971', nationality: 'BY' });
    expect(r.body.matches[0]).toMatchObject({ list: 'eu', entry_id: 'EU.9001.12', programme: 'BLR' });
    await expect(service.loadList('eu', chunksOf(EU_SAMPLE.replace('</export>', '')), 'broken')).rejects.toBeInstanceOf(ListFormatError);
    const versions = await service.activeLists();
    expect(versions.map((v) => [v.list, v.entries, v.source])).toEqual([['eu', 3, 'test'], ['un', 1003, 'bundled:un']]);
    const only = await screenReq({ name: 'Sovfracht Shipping', lists: ['eu'] });
    expect(only.body.lists.map((l: any) => l.name)).toEqual(['eu']);
  });

  test('CLI: aml load prints the counts; a malformed file exits 1 and changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aml-cli-'));
    try {
      writeFileSync(join(dir, 'eu.xml'), EU_SAMPLE);
      writeFileSync(join(dir, 'bad.xml'), '<export generationDate="x"><sanctionEntity');
      const ok = await runCli(['aml', 'load', '--source', 'eu', '--file', join(dir, 'eu.xml'), '--json'], h.dbEnv);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ list: 'eu', entries: 3, persons: 2, organisations: 1 });
      const bad = await runCli(['aml', 'load', '--source', 'eu', '--file', join(dir, 'bad.xml')], h.dbEnv);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('error:');
      expect((await runCli(['aml', 'load', '--source', 'ofac', '--file', 'x'], h.dbEnv)).code).toBe(2);
      expect((await amlService(h.ctx).activeLists()).find((v) => v.list === 'eu')!.source).toBe(join(dir, 'eu.xml'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('monitoring and the scheduled refresh', () => {
  let m: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aml-refresh-'));
    writeFileSync(join(dir, 'eu.xml'), EU_SAMPLE);
    m = await makeApp({ AML_EU_SOURCE: join(dir, 'eu.xml'), AML_UN_SOURCE: UN_FILE });
  });
  afterAll(async () => {
    await m.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a monitored subject is screened again when a list is updated: a new match raises aml.alert for its tenant only', async () => {
    const service = amlService(m.ctx);
    await service.loadList('un', Bun.file(UN_FILE).stream() as never, UN_FILE);
    const a = await m.tenant();
    const b = await m.tenant();
    const watched = await m.json('POST', '/v1/aml/screen', { key: a.api_key, body: { name: 'Olga Petrova', type: 'person', birth_date: '1971', nationality: 'BY', monitor: true, customer_reference: 'cust-9' } });
    expect(watched.body).toMatchObject({ status: 'clear', monitor: true });
    await m.json('POST', '/v1/aml/screen', { key: b.api_key, body: { name: 'Someone Else Entirely', monitor: true } });

    const loaded = await service.loadList('eu', chunksOf(EU_SAMPLE), 'test');
    expect(loaded.monitoring).toEqual({ rescreened: 2, alerts: 1 });
    const events = await m.json('GET', '/v1/events?limit=10', { key: a.api_key });
    const alert = events.body.data.find((e: any) => e.type === 'aml.alert');
    expect(alert.data).toMatchObject({
      previous_screening_id: watched.body.screening_id,
      subject: 'Olga Petrova',
      status: 'potential_match',
      previous_status: 'clear',
      new_matches: [{ list: 'eu', entry_id: 'EU.9001.12', matched_name: 'Olga Ivanovna Petrova' }],
      updated_list: 'eu',
      customer_reference: 'cust-9',
    });
    expect((await m.json('GET', '/v1/events?limit=10', { key: b.api_key })).body.data.filter((e: any) => e.type === 'aml.alert')).toEqual([]);
    // the new screening carries the monitoring on; the old one stopped
    const next = await m.json('GET', `/v1/aml/screenings/${alert.data.screening_id}`, { key: a.api_key });
    expect(next.body).toMatchObject({ monitor: true, previous_screening_id: watched.body.screening_id, status: 'potential_match' });
    // the same list again: screened again, nothing new, no alert
    expect((await service.loadList('eu', chunksOf(EU_SAMPLE), 'test')).monitoring).toEqual({ rescreened: 2, alerts: 0 });
  });

  test('the refresh loads a source only when it declares a new generation, once', async () => {
    const { refreshLists } = await import('../src/features/aml');
    const first = await refreshLists(m.ctx);
    expect(first).toEqual([]); // both sources already at the generation they declare
    writeFileSync(join(dir, 'eu.xml'), EU_SAMPLE.replace('generationDate="2026-11-20T10:15:00.000+01:00"', 'generationDate="2026-11-24T08:00:00.000+01:00"'));
    expect(await refreshLists(m.ctx)).toEqual(['eu']);
    const eu = (await amlService(m.ctx).activeLists()).find((v) => v.list === 'eu')!;
    expect(eu.generatedAt.toISOString()).toBe('2026-11-24T07:00:00.000Z');
    expect(await refreshLists(m.ctx)).toEqual([]);
    // a broken file at the source: logged, the previous version stays
    writeFileSync(join(dir, 'eu.xml'), '<export generationDate="2026-11-25T08:00:00Z"><sanctionEntity');
    expect(await refreshLists(m.ctx)).toEqual([]);
    expect((await amlService(m.ctx).activeLists()).find((v) => v.list === 'eu')!.id).toBe(eu.id);
  });

  test("an erased tenant's subjects are no longer monitored: nothing screened or alerted for it after its erasure", async () => {
    const service = amlService(m.ctx);
    const { db, t: s } = m.ctx.database;
    const gone = await m.tenant();
    const kept = await m.tenant();
    for (const who of [gone, kept]) expect((await m.json('POST', '/v1/aml/screen', { key: who.api_key, body: { name: 'Olga Petrova', monitor: true } })).status).toBe(200);
    const rescreened = async () => (await service.loadList('eu', chunksOf(EU_SAMPLE), 'test')).monitoring.rescreened;
    const before = await rescreened();
    const erased = await runCli(['tenant', 'erase', '--tenant', gone.tenant_id, '--confirm', '--json'], m.dbEnv);
    expect(erased.code).toBe(0);
    const rowsOf = async (tenantId: string) => db.select({ id: s.amlScreenings.id, monitor: s.amlScreenings.monitor }).from(s.amlScreenings).where(eq(s.amlScreenings.tenantId, tenantId));
    const kept7 = await rowsOf(gone.tenant_id);
    expect(kept7.length).toBeGreaterThan(0); // AML records are kept (7 years), not monitored
    expect(kept7.every((r) => !r.monitor)).toBe(true);
    expect(await rescreened()).toBe(before - 1);
    // a screening still marked monitored (a tenant erased before erasure ended monitoring) is skipped too
    await db.update(s.amlScreenings).set({ monitor: true }).where(eq(s.amlScreenings.id, kept7[0]!.id));
    expect(await rescreened()).toBe(before - 1);
    expect((await rowsOf(gone.tenant_id)).length).toBe(kept7.length);
    const events = await db.select({ id: s.events.id }).from(s.events).where(and(eq(s.events.tenantId, gone.tenant_id), gt(s.events.createdAt, new Date(Date.now() - 60_000))));
    expect(events).toEqual([]);
    expect((await rowsOf(kept.tenant_id)).filter((r) => r.monitor).length).toBe(1);
  });
});
