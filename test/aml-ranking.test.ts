/**
 * AML screening: a list name holding every token of the query ranks first, and scores at least as
 * high as one pairing the query only by similar forms — a feminine surname, a patronymic made from
 * the query's given name ("Ivan Petrov": "Ivan Ivanovich Petrov" above "Olga Ivanovna Petrova",
 * which used to score 0.891 against 0.882). Through POST /v1/aml/screen with a small EU list loaded
 * beside the shipped UN sample, and as a property over generated names.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import type { ListEntry } from '../src/features/aml/lists';
import { buildIndex, screen, spelling, tokens } from '../src/features/aml/matcher';
import { amlService, loadConfiguredLists } from '../src/features/aml';
import { mulberry32 } from '../src/lib/prng';
import { makeApp, type TestApp } from './helpers';
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
    expect(first.score).toBeGreaterThan(olga.score);
    for (const m of r.body.matches.slice(1)) expect(m.score).toBeLessThanOrEqual(first.score);
    // at the default min_score the exact-token name is the top match, and decides the status
    const plain = await screenReq({ name: 'Ivan Petrov', type: 'person' });
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
