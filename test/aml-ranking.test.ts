/**
 * AML screening: a list name holding every token of the query ranks first, and scores at least as
 * high as one pairing the query only by similar forms — a feminine surname, a patronymic made from
 * the query's given name ("Ivan Petrov": "Ivan Ivanovich Petrov" above "Olga Ivanovna Petrova",
 * which used to score 0.891 against 0.882), and a name holding every query token beside parts the
 * caller did not give ranks above one pairing a token by a different name that looks alike ("Ahmed
 * Aliyani": "AHMED MAHAMUD HASSAN ALIYANI" above "Ghailani, Ahmed", which used to score 0.922 against
 * 0.875). Through POST /v1/aml/screen with a small EU list loaded beside the shipped UN sample, on
 * the UN sample with the pure matcher, and as properties over generated names.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { join } from 'node:path';
import { parseUnList, type ListEntry } from '../src/features/aml/lists';
import { buildIndex, jaroWinkler, nameSimilarity, PAIR_THRESHOLD, screen, spelling, tokens, type ScreenQuery } from '../src/features/aml/matcher';
import { amlService, loadConfiguredLists } from '../src/features/aml';
import { mulberry32 } from '../src/lib/prng';
import { makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const chunksOf = (text: string) => (async function* () {
  for (let i = 0; i < text.length; i += 1000) yield text.slice(i, i + 1000);
})();

/** An EU FSF 1.1 export (the published shape) of persons, one strong name each. */
function euList(persons: { id: string; name: string }[]) {
  const entities = persons.map(
    (p, i) => `  <sanctionEntity designationDetails="" unitedNationId="" euReferenceNumber="${p.id}" logicalId="${100 + i}" designationDate="2023-02-25">
    <regulation regulationType="regulation" organisationType="council" publicationDate="2023-02-25" entryIntoForceDate="2023-02-25" numberTitle="2023/427" programme="RUS" logicalId="${1000 + i}"/>
    <subjectType code="person" classificationCode="P"/>
    <nameAlias firstName="" middleName="" lastName="" wholeName="${p.name}" function="" gender="" title="" nameLanguage="" strong="true" regulationLanguage="en" logicalId="${2000 + i}"/>
  </sanctionEntity>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<export xmlns="http://eu.europa.ec/fpi/fsd/export" generationDate="2026-11-20T10:15:00.000+01:00" globalFileId="1">
${entities.join('\n')}
</export>`;
}

// the fuzzy-only names get the lower references, so a tie on score would not put the exact one first
const PERSONS = [
  { id: 'EU.1.1', name: 'Olga Ivanovna Petrova' }, // "Ivan Petrov": Ivanovna ≈ Ivan, Petrova ≈ Petrov
  { id: 'EU.9.1', name: 'Ivan Ivanovich Petrov' },
  { id: 'EU.1.2', name: 'Ivan Sergeevich Ivanova' }, // "Sergei Ivanov": Sergeevich ≈ Sergei, Ivanova ≈ Ivanov
  { id: 'EU.9.2', name: 'Sergei Petrovich Ivanov' },
  { id: 'EU.1.3', name: 'Tatiana Dmitrievna Kozlova' }, // "Dmitri Kozlov"
  { id: 'EU.9.3', name: 'KOZLOV, Dmitri Konstantinovich' }, // the list's own order, a long patronymic
  { id: 'EU.1.4', name: 'Yelena Morozov' }, // "Elena Morozova": similar forms only, nothing left over
  { id: 'EU.9.4', name: 'Elena Pavlovna Morozova' },
];

describe('POST /v1/aml/screen: the name holding the query\'s very tokens comes first', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
    await loadConfiguredLists(h.ctx); // the UN sample shipped with the service (the default source)
    // loaded before the first screening, so the route's index is built with it
    const loaded = await amlService(h.ctx).loadList('eu', chunksOf(euList(PERSONS)), 'test');
    expect(loaded).toMatchObject({ list: 'eu', entries: PERSONS.length, persons: PERSONS.length });
  });
  afterAll(() => h.close());
  const screenReq = (body: unknown) => h.json('POST', '/v1/aml/screen', { key, body });

  test('"Ivan Petrov": "Ivan Ivanovich Petrov" first, above "Olga Ivanovna Petrova"', async () => {
    const r = await screenReq({ name: 'Ivan Petrov', type: 'person', min_score: 0.5 });
    expect(r.status).toBe(200);
    const [first] = r.body.matches;
    expect(first).toMatchObject({ list: 'eu', entry_id: 'EU.9.1', matched_name: 'Ivan Ivanovich Petrov', match_type: 'fuzzy' });
    expect(first.explanation.tokens).toEqual([
      { query: 'ivan', matched: 'ivan', similarity: 1 },
      { query: 'petrov', matched: 'petrov', similarity: 1 },
    ]);
    const olga = r.body.matches.find((m: any) => m.entry_id === 'EU.1.1');
    expect(olga).toBeDefined(); // still reported at this min_score, only lower
    // Ivan and Petrov are common words (COMMON_NAME_WORDS): both names score the common-words cap
    // (0.8), the one holding the very tokens first
    expect(first.score).toBeGreaterThanOrEqual(olga.score);
    for (const m of r.body.matches.slice(1)) expect(m.score).toBeLessThanOrEqual(first.score);
    // at the default min_score a common given name and surname alone are clear; with birth date and
    // nationality agreeing the exact-token name is the top match, and decides the status
    expect((await screenReq({ name: 'Ivan Petrov', type: 'person' })).body.status).toBe('clear');
    const plain = await screenReq({ name: 'Ivan Petrov', type: 'person', min_score: 0.79 });
    expect(plain.body.status).toBe('potential_match');
    expect(plain.body.matches[0]).toMatchObject({ entry_id: 'EU.9.1' });
  });

  test('other names of the kind: patronymics, feminine forms, the list\'s own order', async () => {
    for (const [name, exact, similar] of [
      ['Sergei Ivanov', 'EU.9.2', 'EU.1.2'],
      ['Dmitri Kozlov', 'EU.9.3', 'EU.1.3'],
      ['Elena Morozova', 'EU.9.4', 'EU.1.4'],
      ['Petrov Ivan', 'EU.9.1', 'EU.1.1'], // tokens in another order
    ]) {
      const r = await screenReq({ name, type: 'person', min_score: 0.5 });
      const at = (id: string) => r.body.matches.findIndex((m: any) => m.entry_id === id);
      expect({ name, first: r.body.matches[0]?.entry_id }).toEqual({ name, first: exact });
      expect(at(similar)).toBeGreaterThan(0);
      expect(r.body.matches[at(similar)].score).toBeLessThanOrEqual(r.body.matches[0].score);
    }
    // a name of similar forms only is at most a potential match, and says so
    const yelena = (await screenReq({ name: 'Elena Morozova', min_score: 0.5 })).body.matches.find((m: any) => m.entry_id === 'EU.1.4');
    expect(yelena.score).toBeLessThanOrEqual(0.9);
    expect(yelena.explanation.summary).toContain('similar tokens only');
  });
});

// --- property: generated names ----------------------------------------------------------------------

const MALE = ['Ivan', 'Sergei', 'Dmitri', 'Nikolai', 'Pavel', 'Viktor', 'Oleg', 'Igor', 'Andrei', 'Mikhail', 'Aleksandr', 'Konstantin', 'Vladimir', 'Boris', 'Yuri', 'Fyodor', 'Grigori', 'Anatoli', 'Leonid', 'Roman'];
const FEMALE = ['Olga', 'Tatiana', 'Elena', 'Anna', 'Natalia', 'Irina', 'Svetlana', 'Marina', 'Ekaterina', 'Yulia', 'Galina', 'Ludmila', 'Vera', 'Nadezhda', 'Ksenia'];
const SURNAMES = ['Petrov', 'Ivanov', 'Smirnov', 'Kuznetsov', 'Popov', 'Sokolov', 'Lebedev', 'Kozlov', 'Novikov', 'Morozov', 'Volkov', 'Solovyov', 'Vasiliev', 'Zaitsev', 'Pavlov', 'Semenov', 'Golubev', 'Vinogradov', 'Bogdanov', 'Vorobyov'];
/** a father's name → [son's, daughter's] patronymic */
const PATRONYMIC: Record<string, [string, string]> = {
  Ivan: ['Ivanovich', 'Ivanovna'], Sergei: ['Sergeevich', 'Sergeevna'], Dmitri: ['Dmitrievich', 'Dmitrievna'], Nikolai: ['Nikolaevich', 'Nikolaevna'],
  Pavel: ['Pavlovich', 'Pavlovna'], Viktor: ['Viktorovich', 'Viktorovna'], Oleg: ['Olegovich', 'Olegovna'], Igor: ['Igorevich', 'Igorevna'],
  Andrei: ['Andreevich', 'Andreevna'], Mikhail: ['Mikhailovich', 'Mikhailovna'], Aleksandr: ['Aleksandrovich', 'Aleksandrovna'],
  Konstantin: ['Konstantinovich', 'Konstantinovna'], Vladimir: ['Vladimirovich', 'Vladimirovna'], Boris: ['Borisovich', 'Borisovna'],
  Yuri: ['Yurievich', 'Yurievna'], Fyodor: ['Fyodorovich', 'Fyodorovna'], Grigori: ['Grigorievich', 'Grigorievna'], Anatoli: ['Anatolievich', 'Anatolievna'],
  Leonid: ['Leonidovich', 'Leonidovna'], Roman: ['Romanovich', 'Romanovna'],
};

const person = (entry_id: string, name: string): ListEntry => ({ list: 'eu', entry_id, entry_type: 'person', names: [{ name, kind: 'primary', quality: null }], births: [], countries: [], programme: null, listed_on: null });
const spelled = (name: string) => tokens(name).map(spelling);
/** no token of `name` is a token of `query` (after normalisation and spelling): it can pair only by similarity */
const similarOnly = (query: string, name: string) => !spelled(name).some((t) => spelled(query).includes(t));

describe('property: an exact-token name never ranks below a similar-only one', () => {
  test('generated Slavic names: the query\'s given name and surname beside a patronymic, against feminine forms and patronymics made of them', () => {
    const rand = mulberry32(20261125);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const cases: { query: string; exact: string; similar: string }[] = [];
    while (cases.length < 48) {
      const given = pick(MALE);
      const surname = pick(SURNAMES);
      const father = pick(MALE);
      const query = rand() < 0.2 ? `${surname} ${given}` : `${given} ${surname}`;
      // the listed person: the query's tokens, a patronymic, sometimes in the list's "SURNAME, Given Patronymic" order
      const exact = rand() < 0.3 ? `${surname.toUpperCase()}, ${given} ${PATRONYMIC[father]![0]}` : `${given} ${PATRONYMIC[father]![0]} ${surname}`;
      const kind = cases.length % 4;
      const similar = [
        `${pick(FEMALE)} ${PATRONYMIC[given]![1]} ${surname}a`, // Olga Ivanovna Petrova
        `${pick(MALE)} ${PATRONYMIC[given]![0]} ${surname}a`, // Ivan Sergeevich Ivanova
        `${given}a ${surname}a`, // feminine forms, nothing left over
        `${pick(FEMALE)} ${PATRONYMIC[pick(MALE)]![1]} ${surname}a`, // another's daughter, the feminine surname
      ][kind]!;
      if (!similarOnly(query, similar)) continue; // a random given name equal to the query's is not similar-only
      cases.push({ query, exact, similar });
    }
    const failures: string[] = [];
    let scored = 0;
    for (const [i, c] of cases.entries()) {
      // the similar-only name first in the list and with the lower reference
      const index = buildIndex([person(`X.${i}.1`, c.similar), person(`X.${i}.2`, c.exact)]);
      const found = screen(index, { name: c.query, type: 'any', min_score: 0 });
      const a = found.findIndex((m) => m.entry.entry_id === `X.${i}.2`);
      const b = found.findIndex((m) => m.entry.entry_id === `X.${i}.1`);
      if (b >= 0) scored++;
      if (a !== 0 || (b >= 0 && found[b]!.score > found[a]!.score))
        failures.push(`${c.query}: ${found.map((m) => `${m.matched_name} ${m.score}`).join(' > ')}`);
    }
    expect(failures).toEqual([]);
    expect(scored).toBeGreaterThanOrEqual(cases.length * 0.9); // the similar names were candidates, not missed
  });

  test('generated tokens: every query token plus parts left over, against similar forms of them beside as many parts left over', () => {
    const rand = mulberry32(7);
    const syllables = ['ka', 'ro', 'mi', 'za', 'lev', 'dan', 'shi', 'tor', 'vel', 'nur', 'bek', 'ost', 'ski', 'lin', 'mar', 'gul', 'tem', 'bor'];
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const word = () => pick(syllables) + pick(syllables) + (rand() < 0.5 ? pick(syllables) : '');
    const shuffle = <T>(xs: T[]) => xs.map((x) => [rand(), x] as const).sort((p, q) => p[0] - q[0]).map(([, x]) => x);
    // a similar form: a suffix (feminine, patronymic), two letters swapped, or one changed
    const variant = (t: string) => {
      const r = rand();
      if (r < 0.4) return t + pick(['a', 'ova', 'evna', 'ovich', 'in']);
      if (r < 0.7) return t.slice(0, 2) + t[3] + t[2] + t.slice(4);
      return t.slice(0, -1) + (t.endsWith('o') ? 'e' : 'o');
    };
    const failures: string[] = [];
    let n = 0;
    while (n < 40) {
      const query = Array.from({ length: 2 + Math.floor(rand() * 2) }, word);
      const left = Math.floor(rand() * 3); // parts the exact name carries beyond the query's
      const exact = shuffle([...query, ...Array.from({ length: left }, word)]).join(' ');
      const similar = shuffle([...query.map(variant), ...Array.from({ length: left + Math.floor(rand() * 2) }, word)]).join(' ');
      if (!similarOnly(query.join(' '), similar) || new Set(spelled(similar)).size !== spelled(similar).length) continue;
      n++;
      const index = buildIndex([person('Y.1', similar), person('Y.2', exact)]);
      const found = screen(index, { name: query.join(' '), type: 'any', min_score: 0 });
      const a = found.findIndex((m) => m.entry.entry_id === 'Y.2');
      const b = found.findIndex((m) => m.entry.entry_id === 'Y.1');
      if (a !== 0 || (b >= 0 && found[b]!.score > found[a]!.score)) failures.push(`${query.join(' ')}: ${found.map((m) => `${m.matched_name} ${m.score}`).join(' > ')}`);
    }
    expect(failures).toEqual([]);
  });
});

// --- the query found whole within a longer list name ------------------------------------------------

const status = (score: number | undefined) => (score === undefined ? 'clear' : score >= 0.97 ? 'match' : 'potential_match');

describe('the query found whole within a longer list name ranks above a name pairing a token only by similarity', () => {
  const un: ListEntry[] = [];
  let index: ReturnType<typeof buildIndex>;
  beforeAll(async () => {
    await parseUnList(Bun.file(join(ROOT, 'fixtures/sanctions/un_consolidated_list.xml')).stream() as never, (e) => void un.push(e));
    index = buildIndex(un);
  });
  const top = (name: string, o: Partial<ScreenQuery> = {}) => screen(index, { name, type: 'any', min_score: 0.85, ...o });

  test('"Ahmed Aliyani" on the UN sample: "AHMED MAHAMUD HASSAN ALIYANI" (0.93, was 0.875) above "Ghailani, Ahmed" (0.922)', () => {
    const found = screen(index, { name: 'Ahmed Aliyani', type: 'any', min_score: 0.85 });
    expect(found.map((m) => [m.entry.entry_id, m.matched_name, m.score])).toEqual([
      ['CDi.040', 'AHMED MAHAMUD HASSAN ALIYANI', 0.93],
      ['QDi.028', 'Ghailani, Ahmed', 0.922], // as before: "aliyani" paired with "ghailani" at 0.861
    ]);
    expect(found[0]!.explanation).toMatchObject({
      tokens: [{ query: 'ahmed', matched: 'ahmed', similarity: 1 }, { query: 'aliyani', matched: 'aliyani', similarity: 1 }],
      unmatched_tokens: [],
      name_score: 0.93,
      summary: expect.stringContaining('(every query token within a longer name)'),
    });
    // the paired score alone put it second: each part left over cost a quarter of its share
    expect(nameSimilarity(tokens('Ahmed Aliyani'), tokens('AHMED MAHAMUD HASSAN ALIYANI')).score).toBe(0.875);
    // both entries are Tanzanian: with the country asked, all else is equal, and the order holds
    const tz = screen(index, { name: 'Ahmed Aliyani', type: 'person', country: 'TZ', min_score: 0.85 });
    expect(tz.map((m) => [m.entry.entry_id, m.score])).toEqual([['CDi.040', 0.95], ['QDi.028', 0.942]]);
    expect(status(tz[0]!.score)).toBe('potential_match');
  });

  test('all else equal (birth date, country, type), in every combination: the name holding both tokens first; a match only with both attributes agreeing', () => {
    const at = (entry_id: string, name: string): ListEntry => ({ ...person(entry_id, name), list: 'un', births: [{ date: '1974-03-14', year: 1974, from_year: null, to_year: null }], countries: ['TZ'] });
    // the similar one first in the list and with the lower reference: neither order nor a tie puts the other first
    const small = buildIndex([at('QDi.028', 'Ghailani, Ahmed'), at('QDi.999', 'AHMED MAHAMUD HASSAN ALIYANI')]);
    const expected: [Partial<ScreenQuery>, number, number, string][] = [
      [{}, 0.93, 0.922, 'potential_match'],
      [{ country: 'TZ' }, 0.95, 0.942, 'potential_match'],
      [{ birth_date: '1974' }, 0.96, 0.952, 'potential_match'],
      [{ birth_date: '1974-03-14', country: 'TZ' }, 0.98, 0.972, 'match'], // as "Ghailani, Ahmed" is a match with both
      [{ birth_date: '1990', country: 'KE' }, 0.73, 0.722, 'clear'],
    ];
    for (const [o, whole, similar, st] of expected) {
      const found = screen(small, { name: 'Ahmed Aliyani', type: 'person', min_score: 0.5, ...o });
      expect({ o, found: found.map((m) => [m.entry.entry_id, m.score]) }).toEqual({ o, found: [['QDi.999', whole], ['QDi.028', similar]] });
      expect({ o, status: status(found.find((m) => m.score >= 0.85)?.score) }).toEqual({ o, status: st });
    }
    // the other type lowers both alike
    expect(screen(small, { name: 'Ahmed Aliyani', type: 'organisation', min_score: 0.5 }).map((m) => [m.entry.entry_id, m.score])).toEqual([['QDi.999', 0.83], ['QDi.028', 0.822]]);
  });

  test('scores and statuses of the existing cases are unchanged', () => {
    const cases: [string, Partial<ScreenQuery>, [string, number] | null, string][] = [
      ['Eric Badege', {}, ['CDi.001', 1], 'match'],
      ['Badége, Éric', { type: 'person' }, ['CDi.001', 1], 'match'],
      ['AL-QAIDA', {}, ['QDe.004', 1], 'match'],
      ['Ahmed Ghailani', {}, ['QDi.028', 1], 'match'],
      ['Erik Badege', {}, ['CDi.001', 0.95], 'potential_match'], // a typo: a potential match alone
      ['Erik Badege', { type: 'person', birth_date: '1971', country: 'CD' }, ['CDi.001', 1], 'match'], // and a match with its attributes
      ['Eric Badege', { type: 'person', birth_date: '1985-03-01' }, ['CDi.001', 0.85], 'potential_match'],
      ['Eric Badege', { type: 'organisation' }, ['CDi.001', 0.9], 'potential_match'],
      ['Eric Mutombo Badege', { type: 'person', birth_date: '1971', country: 'CD' }, ['CDi.001', 0.95], 'potential_match'], // a list name found whole within a longer query
      ['Eric Badege Junior', {}, ['CDi.001', 0.9], 'potential_match'],
      ['Chairman', {}, ['CDi.022', 0.9], 'potential_match'], // a low-quality alias
      ['Hassan', {}, ['IQi.061', 0.9], 'potential_match'], // one word
      ['Ali Mohammed', {}, ['CFi.010', 0.95], 'potential_match'], // common names only
      ['Ahmed Mahamud Hassan', {}, ['CDi.040', 0.95], 'potential_match'], // "mahamud" against the list's "MAHMOUD": near-same, no part left over; its identical tokens all common words, so a potential match alone (was a match, 0.975)
      ['Ahmed Mahamud Hassan', { birth_date: '1950' }, ['CDi.040', 0.85], 'potential_match'], // its birth date disagreeing: the near spelling of a name holding a rare token is reviewed
      ['Ahmed Mahamud Aliyani', {}, ['CDi.040', 0.938], 'potential_match'], // found whole, one part left over: the paired score, above the floor
      ['Saddam Hussein Tikriti', {}, ['IQi.001', 0.964], 'potential_match'], // only the article left over: as before
      ['João Gonçalves Silva', { type: 'person' }, null, 'clear'],
      ['Eric Mutombo', {}, null, 'clear'], // a part of a list name is not the list name
    ];
    for (const [name, o, first, st] of cases) {
      const [m] = top(name, o);
      expect({ name, o, first: m ? [m.entry.entry_id, m.score] : null, status: status(m?.score) }).toEqual({ name, o, first, status: st });
    }
    // a name with only an initial left over is a match as before (a potential match, 0.95, when its words are common: Ivan Petrov); one with an article left over a potential match (0.95)
    const small = buildIndex([person('I.1', 'Ivan P. Petrov'), person('I.2', 'Omar al-Farouk'), person('I.3', 'Erik P. Badegov')]);
    expect(screen(small, { name: 'Erik Badegov', type: 'any', min_score: 0.85 }).map((m) => [m.entry.entry_id, m.score])).toEqual([['I.3', 0.972]]);
    expect(screen(small, { name: 'Ivan Petrov', type: 'any', min_score: 0.85 }).map((m) => [m.entry.entry_id, m.score])).toEqual([['I.1', 0.95]]);
    expect(screen(small, { name: 'Omar Farouk', type: 'any', min_score: 0.85 }).map((m) => [m.entry.entry_id, m.score])).toEqual([['I.2', 0.95]]);
  });

  test('property: every query token beside parts left over scores 0.92 to 0.94 (or its paired score, if more), never a match on the name alone, and ranks above a name pairing a token by a look-alike that scores no more', () => {
    const rand = mulberry32(20261203);
    const syllables = ['ka', 'ro', 'mi', 'za', 'lev', 'dan', 'shi', 'tor', 'vel', 'nur', 'bek', 'ost', 'ski', 'lin', 'mar', 'gul', 'tem', 'bor', 'ali', 'ya', 'ni'];
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const word = () => pick(syllables) + pick(syllables) + (rand() < 0.6 ? pick(syllables) : '');
    const shuffle = <T>(xs: T[]) => xs.map((x) => [rand(), x] as const).sort((p, q) => p[0] - q[0]).map(([, x]) => x);
    // another name that looks alike: a letter or a syllable in front ("Ghailani" for "Aliyani"), another first syllable, another last one
    const lookAlike = (t: string) => {
      const r = rand();
      if (r < 0.4) return pick(['g', 'k', 'm', 'b', 'gh']) + t;
      if (r < 0.7) return pick(syllables) + t.slice(2);
      return t.slice(0, -2) + pick(syllables);
    };
    const attributes: Partial<ScreenQuery>[] = [{}, { country: 'TZ' }, { birth_date: '1974' }, { birth_date: '1974', country: 'TZ' }, { birth_date: '1990' }];
    const at = (entry_id: string, name: string): ListEntry => ({ ...person(entry_id, name), births: [{ date: null, year: 1974, from_year: null, to_year: null }], countries: ['TZ'] });
    const failures: string[] = [];
    let flawed = 0; // cases where the look-alike outscored the paired score of the name holding every token (it ranked first)
    let ordered = 0; // cases the order was checked on
    let n = 0;
    while (n < 120) {
      const query = Array.from({ length: 2 + Math.floor(rand() * 2) }, word);
      const i = Math.floor(rand() * query.length);
      const other = lookAlike(query[i]!);
      const s = jaroWinkler(spelling(other), spelling(query[i]!));
      const similar = query.map((t, j) => (j === i ? other : t));
      const whole = shuffle([...query, ...Array.from({ length: 1 + Math.floor(rand() * 4) }, word)]);
      // the look-alike must pair, and be another name, not a typo (0.861 for "Ghailani" against "Aliyani"); every token distinct once spelled
      const all = [...query, other, ...whole].map(spelling);
      if (s < PAIR_THRESHOLD || s >= 0.9 || new Set(spelled(whole.join(' '))).size !== whole.length || new Set(spelled(similar.join(' '))).size !== similar.length || all.filter((t) => t === spelling(other)).length > 1) continue;
      n++;
      const o = attributes[n % attributes.length]!;
      const found = screen(buildIndex([at('Y.1', similar.join(' ')), at('Y.2', whole.join(' '))]), { name: query.join(' '), type: 'person', min_score: 0, ...o });
      const w = found.find((m) => m.entry.entry_id === 'Y.2')!;
      const l = found.find((m) => m.entry.entry_id === 'Y.1');
      const paired = nameSimilarity(tokens(query.join(' ')), tokens(whole.join(' ')));
      const line = `${query.join(' ')} ${JSON.stringify(o)}: ${found.map((m) => `${m.matched_name} ${m.score} (${m.explanation.name_score})`).join(' > ')}`;
      // the name score: at least 0.92 + 0.02 × the share of the list name the query holds, or the paired score if more
      const floor = Math.round((0.92 + 0.02 * paired.nameCoverage) * 1000) / 1000;
      if (w.explanation.name_score !== Math.max(floor, Math.round(paired.score * 1000) / 1000)) failures.push(`name score: ${line}`);
      if (paired.score < 0.97 && !Object.keys(o).length && w.score >= 0.97) failures.push(`a match on the name alone: ${line}`);
      if (l && l.explanation.name_score > Math.round(paired.score * 1000) / 1000) flawed++;
      // above the look-alike whenever that scores no more than the floor (a near-same name may score more: "Ahmad Hasan" 0.95 for "Ahmed Hassan")
      if (l && l.explanation.name_score <= floor && found[0] !== w) failures.push(`order: ${line}`);
      if (l && l.explanation.name_score <= floor) ordered++;
    }
    expect(failures).toEqual([]);
    expect(flawed).toBeGreaterThanOrEqual(60); // the flaw was exercised, not avoided by the generator
    expect(ordered).toBeGreaterThanOrEqual(15);
  });
});
