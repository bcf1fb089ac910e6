/**
 * Name screening, pure (REFERENCE §10, after moov-io/watchman and OpenSanctions' yente):
 * normalised tokens compared regardless of order with Jaro–Winkler and a best one-to-one pairing,
 * unmatched tokens on either side counting against the score (an identical token counting more than
 * a merely similar one), aliases screened like names, then
 * birth date, country and entity type raising or lowering a candidate. A vocabulary index (first
 * and last two letters of each distinct token, and the sorted letters of a long one) picks the
 * candidates, so a screen never scores every name.
 */
import anyAscii from 'any-ascii';
import { FORM_LETTERS } from '../../lib/company-form';
import type { BirthInfo, ListEntry } from './lists';

/** the company forms set aside here: not ACE nor SU, a word and a syllable of listed names ("Ace Ltd", "Kim Su" are screened on them; "Ahmed A C E" keeps its initials) */
const FORMS: ReadonlySet<string> = new Set([...FORM_LETTERS].filter((f) => f !== 'ace' && f !== 'su'));
// honorifics, connectives and company forms that say nothing about who is meant. Tokens have lost
// the shape that tells "S.A." from the surname Sá (transliterated, lower case; list names in
// capitals), so a form is known here by its letters (src/lib/company-form.ts), wherever it stands
// ("TRADING COMPANY (TC)"), and set aside alike in the query and the list's names: "Rui Sá" and
// "RUI SA" still pair. A surname Sá set aside on both sides costs an alert at most, never a match
const NOISE = new Set([
  'mr', 'mrs', 'ms', 'dr', 'sr', 'sra', 'dona', 'don', 'sheikh', 'shaykh', 'haji', 'hajji', 'mullah', 'maulvi', 'general',
  ...FORMS,
  'the', 'and', 'of', 'e', 'de', 'da', 'do', 'das', 'dos', 'del', 'la', 'le',
]);

/**
 * Transliterated to ASCII (any-ascii: every script, so "Ерик Бадеге" is "erik badege", a Cyrillic
 * "а" inside a Latin name is an "a", diacritics, ø, ł and ß are plain letters, and invisible format
 * characters — soft hyphen, zero-width joiners and spaces — are gone rather than splitting a token),
 * lower case, punctuation to spaces, noise words dropped. A company form spelt in letters ("S.A.",
 * "S. A.", "S.p.A.", "B.V.", "L.da") is one form: as single letters ("s", "a") it stayed in the
 * name, and counted against a match. Pictographs say nothing of a name and are dropped first
 * (any-ascii spells them as words).
 */
export function tokens(name: string): string[] {
  const base = anyAscii(name.replace(/\p{Extended_Pictographic}/gu, ' '))
    .toLowerCase()
    .replace(/\bl\.da\b/g, 'lda')
    .replace(/['`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  const all = joinSpeltForms(base ? base.split(' ') : []);
  const kept = all.filter((t) => !NOISE.has(t));
  return kept.length ? kept : all;
}

/**
 * One spelling for the variants transliteration makes of one sound (kh/h, ph/f, y/i, doubled
 * letters): "Хусейн" is `khuseyn` and the list's HUSSEIN `hussein`; both are `husein`. Mohammed and
 * Mohamed, Aly and Ali likewise. Tokens are compared (and indexed) in this spelling, and shown as
 * they are.
 */
export const spelling = (token: string) => (token.length < 3 ? token : token.replace(/kh/g, 'h').replace(/ph/g, 'f').replace(/y/g, 'i').replace(/([a-z])\1+/g, '$1'));

/**
 * Whether a name says who is meant: at least two letters or digits besides titles, connectives and
 * company forms ("Lda", "S.A.", "Dr. da" name no one; as a list name they are kept, as a query refused).
 */
export const identifiesSomeone = (name: string) => screenable(tokens(name).filter((t) => !NOISE.has(t)));

/**
 * Runs of one-letter tokens: the longest stretch of each that spells a company form, at the end of
 * the name (only other forms or noise after it), becomes that form. Elsewhere letters are initials
 * ("A. G. Rahman", "S. A. Khan" keep theirs).
 */
function joinSpeltForms(all: string[]): string[] {
  if (!all.some((t, i) => t.length === 1 && all[i + 1]?.length === 1)) return all;
  const atEnd = (from: number) => all.slice(from).every((t) => NOISE.has(t));
  const out: string[] = [];
  for (let i = 0; i < all.length; ) {
    let form = 0;
    for (let end = i + 1; end < all.length && all[end]!.length === 1 && all[i]!.length === 1; end++)
      if (FORMS.has(all.slice(i, end + 1).join('')) && atEnd(end + 1)) form = end + 1 - i;
    if (form) {
      out.push(all.slice(i, i + form).join(''));
      i += form;
    } else out.push(all[i++]!);
  }
  return out;
}

/** Whether a name's tokens say enough to screen by: at least two letters or digits in all. */
export const screenable = (t: string[]) => t.reduce((n, token) => n + token.length, 0) >= 2;

/** Jaro–Winkler similarity (prefix scale 0.1, up to 4 characters). */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return 1;
  const la = a.length;
  const lb = b.length;
  if (!la || !lb) return 0;
  const window = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  const ma = new Array<boolean>(la).fill(false);
  const mb = new Array<boolean>(lb).fill(false);
  let matches = 0;
  for (let i = 0; i < la; i++) {
    const lo = Math.max(0, i - window);
    const hi = Math.min(lb - 1, i + window);
    for (let j = lo; j <= hi; j++) {
      if (!mb[j] && a[i] === b[j]) {
        ma[i] = mb[j] = true;
        matches++;
        break;
      }
    }
  }
  if (!matches) return 0;
  let t = 0;
  for (let i = 0, j = 0; i < la; i++) {
    if (!ma[i]) continue;
    while (!mb[j]) j++;
    if (a[i] !== b[j]) t++;
    j++;
  }
  const jaro = (matches / la + matches / lb + (matches - t / 2) / matches) / 3;
  let prefix = 0;
  while (prefix < 4 && prefix < la && prefix < lb && a[prefix] === b[prefix]) prefix++;
  return jaro + prefix * 0.1 * (1 - jaro);
}

export interface TokenPair {
  query: string;
  matched: string;
  similarity: number;
}

export const QUERY_WEIGHT = 0.75;
/**
 * The weight of a part of a list name (spelled): one for a part of four letters or more, whatever
 * its length — a given name, a surname, a patronymic — and its letters in quarters below that, so
 * an initial ("M.") weighs a quarter and an article ("al", "el") a half.
 */
export const partWeight = (spelled: string) => (spelled.length >= 4 ? 1 : spelled.length / 4);

export interface NameSimilarity {
  score: number;
  pairs: TokenPair[];
  unmatched: string[];
  /** how much of the list name paired (by partWeight; a part left unpaired 0, a paired one its similarity) */
  nameCoverage: number;
  /** query tokens paired with an identical token (ranking: more first among equal scores) */
  exactTokens: number;
  /** the pairs as compared (spelled): query token, list token, similarity */
  spelledPairs: { q: string; c: string; s: number }[];
  /** the partWeight of the list name's parts left unpaired */
  leftover: number;
}

/**
 * Similarity of two token lists, order-free: the best one-to-one pairing (greedy on similarity),
 * a token left unpaired on either side scoring 0. The caller's side weighs QUERY_WEIGHT, its tokens
 * weighted by length (a typo in a long token matters less). The list name's side weighs its parts
 * by partWeight, a paired part counting its similarity (and no more weight than the query token it
 * pairs with: "Ali" explains only so much of "Alia"): a part the caller left out — a patronymic, a
 * middle name — costs the same however long it is spelt. (By letters, "Ivanovich" cost twice what
 * "Olga" did, and "Ivanovna" and "Petrova" paired with "Ivan" and "Petrov" were credited their whole
 * length: "Olga Ivanovna Petrova" outscored "Ivan Ivanovich Petrov" for "Ivan Petrov".) So a name
 * holding every query token scores at least as high as any name pairing some of them only by
 * similarity while leaving parts of at least as much weight unpaired: the latter's list side is at
 * most W/(W + its leftover), W the query tokens' weight, and its query side below 1. (Screening
 * raises a name holding every query token beside parts left over further: FOUND_WHOLE_MIN.)
 */
export function nameSimilarity(q: string[], c: string[]): NameSimilarity {
  if (!q.length || !c.length) return { score: 0, pairs: [], unmatched: [...q], nameCoverage: 0, exactTokens: 0, spelledPairs: [], leftover: c.reduce((w, t) => w + partWeight(spelling(t)), 0) };
  const cs = c.map(spelling);
  const sims = q.map((t) => {
    const m = new Map<string, number>();
    for (const v of cs) {
      const s = jaroWinkler(spelling(t), v);
      if (s >= PAIR_THRESHOLD && !((m.get(v) ?? 0) >= s)) m.set(v, s);
    }
    return m;
  });
  return pairUp(q, c, sims, cs, q.map(spelling), cs.reduce((w, t) => w + partWeight(t), 0));
}

export interface IndexedName {
  entry: number;
  name: string;
  kind: 'primary' | 'alias' | 'original_script';
  /** the list's own quality of an alias (UN good/low, EU strong/weak) */
  quality: ListEntry['names'][number]['quality'];
  /** as shown */
  tokens: string[];
  /** as compared and indexed (`spelling`) */
  spelled: string[];
  joined: string;
  /** its parts' total partWeight */
  weight: number;
  /** its spelled tokens that are common: many entries share them, or a very common name word */
  common: Set<string>;
  /** its spelled tokens many entries share (the list's own commonness only) */
  shared: Set<string>;
}

/**
 * The index: every list name by token, and every distinct token (the vocabulary, far smaller than
 * the names) by blocking key. A screen compares each query token with the vocabulary tokens that
 * share a key (first or last two letters), keeps the similar ones, and scores only the names
 * holding one of them — each name's tokens then looked up, not compared again.
 */
export interface ScreeningIndex {
  entries: ListEntry[];
  names: IndexedName[];
  /** token → the names holding it */
  byToken: Map<string, number[]>;
  /** blocking key → distinct tokens */
  vocabulary: Map<string, string[]>;
  /** tokens many entries share (held by at least 1 % of them, and 10: given names, "al", "trading"), and the COMMON_NAME_WORDS the list holds */
  common: Set<string>;
}

// a typo or a transposition rarely touches both ends of a token: the first two and the last two
// letters each make a key (tokens of two letters or fewer are their own key; three letters have both
// ends, so "jan" — JAANN once its doubled letters are one — and "janan" meet)
// letters of a token of five or more, sorted, make a third key: a transposition or a swap anywhere
// (HIDAYTAULLAH for HIDAYATULLAH, a typo near both ends of a long token) keeps its letters
const keysOf = (token: string) => (token.length <= 2 ? [`=${token}`] : token.length < 5 ? [`<${token.slice(0, 2)}`, `>${token.slice(-2)}`] : [`<${token.slice(0, 2)}`, `>${token.slice(-2)}`, `#${[...token].sort().join('')}`]);
/** token pairs less similar than this do not pair (and do not make a name a candidate) */
export const PAIR_THRESHOLD = 0.8;

/**
 * Name words so common across the world that, alone or together, they say little of who is meant —
 * whatever their share of the list (a token held by 1 % of the list's entries is common as well):
 * Arabic and Muslim given names and their elements (abdul, abu, bin), South Asian, Korean, Chinese,
 * West African, Turkish, Portuguese and Spanish, and Slavic names among the most frequent. The UN list holds
 * "Karim" in 9 entries, "Shah" in 5, "Qadir" in 2 and "Camara" in 1, so by its share alone the alias
 * "Abdul Karim" (QDi.218) was a rare name and a match on its own. Compared as the list writes the
 * word (not in `spelling`, which folds Barry into Bari, Lee into Le). They cap what a query of them
 * alone says, never the very name of three words or more (ALI HASSAN AL-MAJID AL-TIKRITI says who is
 * meant), nor the floor of a listed name (the list's own share decides that). Surnames that are
 * themselves listed people's (Tariq, Santos, Yilmaz) are left to the share rule.
 */
export const COMMON_NAME_WORDS: ReadonlySet<string> = new Set(
  [
    // Arabic and Muslim names and name elements
    'muhammad', 'mohammad', 'mohammed', 'mohamed', 'muhammed', 'mohamad', 'mehmet', 'ahmad', 'ahmed', 'ali', 'hassan', 'hasan', 'hussein', 'husain', 'hussain', 'husayn',
    'abdul', 'abd', 'abdel', 'abdal', 'abdur', 'abdus', 'abdullah', 'abdallah', 'abdulla', 'abu', 'bin', 'ibn', 'bint', 'umm', 'rahman', 'rehman', 'rahim', 'karim', 'kareem',
    'qadir', 'qader', 'kadir', 'aziz', 'rashid', 'hamid', 'majid', 'said', 'saeed', 'saleh', 'salih', 'salim', 'omar', 'umar', 'osman', 'usman', 'uthman', 'othman',
    'ibrahim', 'ismail', 'yusuf', 'youssef', 'yousef', 'khalid', 'khaled', 'mahmoud', 'mahmud', 'mahmood', 'mustafa', 'mostafa', 'nasser', 'nasir', 'jamal',
    'faisal', 'fatima', 'aisha', 'ayesha', 'zainab', 'maryam', 'khadija', 'amina', 'aminata', 'shah', 'khan', 'malik', 'mirza', 'syed', 'sayed',
    // South Asian
    'iqbal', 'akhtar', 'siddiqui', 'qureshi', 'chaudhry', 'sharma', 'patel', 'kumar', 'singh', 'gupta', 'begum', 'bibi', 'gul', 'jan', 'ullah',
    // Korean and Chinese surnames
    'kim', 'lee', 'ri', 'yi', 'park', 'pak', 'choi', 'choe', 'jung', 'kang', 'cho', 'yoon', 'yun', 'lim', 'rim', 'han', 'shin',
    'wang', 'li', 'zhang', 'liu', 'chen', 'yang', 'huang', 'zhao', 'wu', 'zhou', 'xu', 'sun', 'zhu', 'hu', 'lin', 'guo', 'gao',
    // West African and Turkish
    'camara', 'kamara', 'diallo', 'traore', 'toure', 'keita', 'kone', 'coulibaly', 'diop', 'ndiaye', 'sow', 'bah', 'barry', 'sylla', 'cisse', 'fofana', 'kaya', 'demir',
    // Portuguese and Spanish
    'silva', 'ferreira', 'pereira', 'oliveira', 'costa', 'rodrigues', 'martins', 'sousa', 'fernandes', 'gomes', 'lopes', 'garcia', 'rodriguez', 'martinez', 'lopez', 'gonzalez', 'fernandez', 'sanchez', 'perez', 'maria', 'jose', 'joao', 'juan', 'ana',
    // Slavic (Russian, Ukrainian, Belarusian, Serbian and Croatian, Polish, Czech, Bulgarian), as
    // transliterated: given names in their usual spellings (Victor and Vera are UN-listed surnames)
    'ivan', 'sergei', 'sergey', 'serhii', 'serhiy', 'aleksandr', 'alexander', 'alexandr', 'oleksandr', 'aleksandar', 'aleksei', 'alexei', 'alexey', 'aleksey', 'oleksii',
    'dmitry', 'dmitri', 'dmitriy', 'dmytro', 'andrei', 'andrey', 'andriy', 'andrii', 'vladimir', 'volodymyr', 'mikhail', 'mykhailo', 'nikolai', 'nikolay', 'mykola',
    'yuri', 'yury', 'yuriy', 'igor', 'ihor', 'oleg', 'oleh', 'pavel', 'pavlo', 'viktor', 'evgeny', 'yevgeny', 'yevgeniy', 'maxim', 'maksim', 'maksym', 'petr', 'pyotr', 'petro',
    'denis', 'artem', 'konstantin', 'boris', 'vadim', 'ruslan', 'anton', 'kirill', 'ilya', 'bogdan', 'bohdan', 'marko', 'milan', 'nikola', 'dragan', 'zoran', 'goran',
    'olga', 'natalia', 'natalya', 'nataliya', 'elena', 'yelena', 'olena', 'jelena', 'tatiana', 'tatyana', 'tetiana', 'irina', 'iryna', 'svetlana', 'anna', 'ekaterina',
    'yekaterina', 'kateryna', 'yulia', 'yuliya', 'anastasia', 'galina', 'halyna', 'lyudmila', 'ludmila', 'marina', 'oksana', 'valentina', 'ivana', 'milica',
    // and the most frequent surnames, the masculine and feminine forms (none a UN-listed person's)
    'ivanov', 'ivanova', 'petrov', 'petrova', 'smirnov', 'smirnova', 'kuznetsov', 'kuznetsova', 'popov', 'popova', 'sokolov', 'sokolova', 'volkov', 'volkova',
    'novikov', 'novikova', 'morozov', 'morozova', 'lebedev', 'lebedeva', 'kozlov', 'kozlova', 'vasiliev', 'vasilyev', 'vasilieva', 'pavlov', 'pavlova', 'fedorov', 'fedorova',
    'kovalenko', 'shevchenko', 'bondarenko', 'tkachenko', 'kravchenko', 'boyko', 'kovalchuk', 'melnyk', 'lysenko', 'marchenko', 'savchenko', 'petrenko',
    'jovanovic', 'petrovic', 'nikolic', 'markovic', 'djordjevic', 'stojanovic', 'ilic', 'horvat', 'kovacevic', 'novak', 'nowak', 'kowalski', 'novik', 'ivanou',
    'georgiev', 'dimitrov', 'nikolov',
  ],
);

export function buildIndex(entries: ListEntry[]): ScreeningIndex {
  const names: IndexedName[] = [];
  const byToken = new Map<string, number[]>();
  const vocabulary = new Map<string, string[]>();
  entries.forEach((e, entry) => {
    for (const n of e.names) {
      const t = tokens(n.name);
      // a name of one letter once its noise is dropped ("E. X. Co." → x) identifies no one: any
      // query of that letter would match it in full
      if (!screenable(t)) continue;
      const spelled = t.map(spelling);
      const weight = spelled.reduce((w, s) => w + partWeight(s), 0);
      const id = names.push({ entry, name: n.name, kind: n.kind, quality: n.kind === 'alias' ? n.quality : null, tokens: t, spelled, joined: spelled.join(' '), weight, common: new Set(), shared: new Set() }) - 1;
      for (const token of new Set(spelled)) {
        let holders = byToken.get(token);
        if (!holders) {
          byToken.set(token, (holders = []));
          for (const k of keysOf(token)) {
            const list = vocabulary.get(k);
            if (list) list.push(token);
            else vocabulary.set(k, [token]);
          }
        }
        holders.push(id);
      }
    }
  });
  const common = new Set<string>();
  const floor = Math.max(10, entries.length * 0.01);
  for (const [token, holders] of byToken) if (new Set(holders.map((id) => names[id]!.entry)).size >= floor) common.add(token);
  for (const n of names) {
    n.spelled.forEach((t, i) => {
      if (common.has(t)) n.shared.add(t);
      if (common.has(t) || COMMON_NAME_WORDS.has(n.tokens[i]!)) n.common.add(t);
    });
  }
  return { entries, names, byToken, vocabulary, common };
}

/** nameSimilarity with the token similarities looked up (sims[i]: vocabulary token → similarity to query token i) */
/** `q` and `c` as shown, `qKeys` and `cKeys` spelled (the similarities are keyed by `cKeys`), `cWeight` the list name's total partWeight */
function pairUp(q: string[], c: string[], sims: Map<string, number>[], cKeys: string[], qKeys: string[], cWeight: number): NameSimilarity {
  const cand: { i: number; j: number; s: number }[] = [];
  for (let i = 0; i < q.length; i++) for (let j = 0; j < c.length; j++) {
    const s = sims[i]!.get(cKeys[j]!);
    if (s !== undefined) cand.push({ i, j, s });
  }
  cand.sort((x, y) => y.s - x.s);
  const usedQ = new Set<number>();
  const usedC = new Set<number>();
  const pairs: TokenPair[] = [];
  const spelledPairs: NameSimilarity['spelledPairs'] = [];
  let sq = 0;
  let sc = 0;
  let exactTokens = 0;
  for (const { i, j, s } of cand) {
    if (usedQ.has(i) || usedC.has(j)) continue;
    usedQ.add(i);
    usedC.add(j);
    pairs.push({ query: q[i]!, matched: c[j]!, similarity: Math.round(s * 1000) / 1000 });
    spelledPairs.push({ q: qKeys[i]!, c: cKeys[j]!, s });
    if (s === 1) exactTokens++; // Jaro–Winkler is 1 only for identical (spelled) tokens
    sq += s * q[i]!.length;
    sc += s * Math.min(partWeight(cKeys[j]!), partWeight(qKeys[i]!));
  }
  const lq = q.reduce((n, t) => n + t.length, 0);
  const nameCoverage = sc / cWeight;
  const leftover = cKeys.reduce((w, t, j) => (usedC.has(j) ? w : w + partWeight(t)), 0);
  return { score: QUERY_WEIGHT * (sq / lq) + (1 - QUERY_WEIGHT) * nameCoverage, pairs, unmatched: q.filter((_, i) => !usedQ.has(i)), nameCoverage, exactTokens, spelledPairs, leftover };
}

export interface ScreenQuery {
  name: string;
  type: 'person' | 'organisation' | 'any';
  birth_date?: string; // YYYY-MM-DD or YYYY
  country?: string; // ISO2
  min_score: number;
  lists?: string[];
}

export type Agreement = 'agrees' | 'disagrees' | 'unknown';

export interface Match {
  entry: ListEntry;
  matched_name: string;
  score: number;
  match_type: 'exact' | 'alias' | 'fuzzy';
  /** query tokens paired with an identical token: among equal scores, more rank first (not in the response) */
  exactTokens: number;
  explanation: {
    summary: string;
    tokens: TokenPair[];
    unmatched_tokens: string[];
    name_score: number;
    alias_quality: 'good' | 'low' | 'strong' | 'weak' | null;
    attributes: { birth_date: Agreement; country: Agreement; type: Agreement };
  };
}

const BIRTH_AGREES = 0.03;
const BIRTH_DISAGREES = -0.15;
const COUNTRY_AGREES = 0.02;
const COUNTRY_DISAGREES = -0.05;
// an entry of the other type: a company named as a listed person ("Eric Badege, Lda") is still
// reviewed (an identical name 0.9, a potential match), never cleared by its type alone
const TYPE_DISAGREES = -0.1;
/** a name whose score is at least this is a "match" (below it, down to min_score, "potential_match") */
export const MATCH_SCORE = 0.97;
/**
 * A name paired with an alias the list itself calls low-quality (UN) or weak (EU) counts this
 * much: such aliases are nicknames and single common words ("Chairman", "Hassan"), so one alone is
 * at most a potential match (0.9, + 0.05 from attributes at most), never a match.
 */
export const WEAK_ALIAS_WEIGHT = 0.9; // also a person's name of one word
/**
 * A list name of two or more tokens found whole within a longer query ("Eric Mutombo Badege",
 * "Eric Badege Junior", "Fundação Saddam Hussein Al-Tikriti") scores this times how fully its
 * tokens paired, when that is more than the query-weighted score (which the extra words sink): a
 * potential match at most (0.9, 0.95 with every attribute agreeing), for the extra words may name
 * someone else — a son, a company — and that is the analyst's call.
 */
export const CONTAINED_NAME_WEIGHT = 0.9;
/** how fully (by partWeight and similarity) a list name's tokens must pair to count as found whole */
const CONTAINED_COVERAGE = 0.95;
/**
 * A name none of whose tokens is identical to a query token — every pair only similar: "Ivana
 * Petrova", "Olga Ivanovna Petrova" for "Ivan Petrov" — scores at most this, a potential match at
 * most (0.95 with every attribute agreeing). Jaro–Winkler rates a feminine form, a patronymic or a
 * surname made from a given name (Petrova 0.97, Ivanovna 0.9, Ivanov 0.93 against Petrov, Ivan) as
 * high as a typo, so a name of such forms alone could outscore one holding the caller's very tokens
 * beside a patronymic (0.917 for two tokens and one left over). Which of the forms is meant is the
 * analyst's call.
 */
export const SIMILAR_ONLY_MAX = 0.9;
/**
 * The query found whole within a longer list name — every query token (two or more) paired with an
 * identical one, the list name holding parts the caller did not give (a middle name, a patronymic,
 * a second surname) — scores at least FOUND_WHOLE_MIN, plus up to COUNTRY_AGREES by the share of the
 * list name the query holds (its nameCoverage, by partWeight): a potential match on the name alone
 * and with one agreeing attribute, a match with birth date and country both agreeing (as a name
 * pairing one token by a typo is). By the paired score each part left over cost a quarter of its
 * share of the name (the list side's weight) — two parts beside the query's two cost 0.125 — while a
 * token paired only by similarity cost its dissimilarity alone: a different surname that looks
 * alike, "Ghailani" for "Aliyani" (0.861), cost 0.078, so "Ghailani, Ahmed" (0.922) outranked "AHMED
 * MAHAMUD HASSAN ALIYANI" (0.875, now 0.93) for "Ahmed Aliyani". A name pairing a query token only by
 * similarity that scores more than this — a typo's or a variant's near-same name ("Ahmad Hasan" for
 * "Ahmed Hassan", 0.95) — still ranks first: raised to 0.94 or more, a name left incomplete would be a
 * match with one agreeing attribute, which it was not.
 */
export const FOUND_WHOLE_MIN = MATCH_SCORE - BIRTH_AGREES - COUNTRY_AGREES; // 0.92
export const DEFAULT_MIN_SCORE = 0.85;
/**
 * The least an identical list name (its primary name or a good alias, of two or more tokens not all
 * common) scores, whatever attributes disagree: a potential match at the default min_score. A birth
 * date and a country both disagreeing (−0.2) had cleared "Jang Song Chol" against KPi.056.
 */
export const IDENTICAL_NAME_MIN = DEFAULT_MIN_SCORE;
/**
 * The most a list name scores without an agreeing birth date or country when none of its rare
 * tokens is the query's very token — its identical tokens all common: "Ali Mohammed", the alias
 * "Abdul Karim", or a fuzzy given name beside a common surname ("Ibrahim Camará" for "IBRAIMA
 * CAMARÁ"): a potential match, never a match on the name alone.
 */
export const COMMON_NAME_CAP = 0.95;
/**
 * The most (before attributes) a list name scores when the query holds only common words of it and
 * leaves the rest: parts of the list name unpaired ("Ahmed Mohamed" in "AHMED ABDI AW-MOHAMED",
 * "Hassan Ali" in "Ali, Sheikh Hassan Dahir Aweys") or paired only loosely ("Aisha" with "Agha"). Two
 * common given names found within a longer name fit thousands of people: below the default
 * min_score (clear) on the name alone, a potential match with birth date and country both agreeing.
 */
export const PARTIAL_COMMON_MAX = 0.8;
/**
 * The most (before attributes) a name scores none of whose tokens is identical to the query's and
 * one of whose pairs is only loosely similar (neither Jaro–Winkler ≥ NEAR_SIMILARITY nor one edit
 * apart): "Sara Moreira" is not "MORTEZA SAFARI" (0.858 before), "Omar Abdullah" not "Oman
 * Abdulrohman". A near spelling of every token ("Erik Badeje") keeps SIMILAR_ONLY_MAX.
 */
export const LOOSE_SIMILAR_MAX = 0.8;
/** a token pair this similar (Jaro–Winkler, spelled) — or one edit apart, in tokens of four letters or more — is a near spelling */
export const NEAR_SIMILARITY = 0.9;
/** a person's one-word name identical to the query (not a common word) keeps IDENTICAL_NAME_MIN if it has at least this many letters */
const ONE_WORD_FLOOR_LETTERS = 4;
/**
 * A one-word query one edit (a letter replaced, added, dropped, or two swapped) from a person's
 * one-word name keeps IDENTICAL_NAME_MIN if the listed word has at least this many letters (and
 * neither word is common): "Hidaaytullah", "Walijab" are reviewed whatever the birth date says. One
 * edit in a word of four or five letters is a quarter or a fifth of it, and mostly lands on another
 * name: of the person-name words of the UN list (and the built-in common words), 87 % of those of
 * four letters and 73 % of five have another one edit away (Faiz/Fais, Adel/Abel, Karim/Karimi),
 * 56 % of six and about 40 % of seven or more, where the neighbours are mostly the list's own
 * spellings of the same name (Mutebusi/Mutebutsi).
 */
export const ONE_WORD_NEAR_LETTERS = 6;

/** Whether two tokens are at most one edit apart (a letter replaced, added, dropped, or two adjacent letters swapped). */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // replaced
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swapped
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/** whether a paired token is a near spelling of the query's (identical, Jaro–Winkler ≥ 0.9, or one edit apart in four letters or more) */
const isNear = (q: string, c: string, s: number) => s >= NEAR_SIMILARITY || (Math.min(q.length, c.length) >= 4 && withinOneEdit(q, c));
/**
 * isNear, or one edit apart as written (`qShown`, `cShown`): `spelling` folds kh into h, so a
 * transposition across it ("akuhnd" for AKHUND: "akuhnd" and "ahund" spelled) is one edit as typed only.
 */
const isNearPair = (q: string, c: string, s: number, qShown: string, cShown: string) => isNear(q, c, s) || (Math.min(qShown.length, cShown.length) >= 4 && withinOneEdit(qShown, cShown));

/** whether a whole birth date given is one of the list's whole, exact dates */
const bornSameDay = (births: BirthInfo[], asked: string | undefined) => asked?.length === 10 && births.some((b) => b.date === asked && !b.approximate);

function birthAgreement(births: BirthInfo[], asked: string | undefined): Agreement {
  if (!asked || !births.length) return 'unknown';
  const year = Number(asked.slice(0, 4));
  const date = asked.length === 10 ? asked : null;
  for (const b of births) {
    // two whole dates agree only if they are the same day (unless the list's is approximate); a
    // year on either side within a year
    if (date && b.date && !b.approximate) {
      if (b.date === date) return 'agrees';
      continue;
    }
    if (b.year !== null && Math.abs(b.year - year) <= 1) return 'agrees';
    if (b.from_year !== null && b.to_year !== null && year >= b.from_year && year <= b.to_year) return 'agrees';
  }
  return 'disagrees';
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Screens one name against the index: matches at or above min_score, best first (one per entry). */
export function screen(index: ScreeningIndex, q: ScreenQuery): Match[] {
  const qt = tokens(q.name);
  if (!qt.length) return [];
  const qs = qt.map(spelling);
  // every query token a common word (built in, or shared by many of the list's entries): "Aleksandr Volkov"
  const queryAllCommon = qt.every((t, i) => COMMON_NAME_WORDS.has(t) || index.common.has(qs[i]!));
  const joined = qs.join(' ');
  // each query token against the vocabulary tokens sharing a key: the similar ones, and their names
  // (computed once per distinct token: a query repeating one token is not the vocabulary walked again)
  const simsOf = new Map<string, Map<string, number>>();
  const sims = qs.map((token) => {
    const known = simsOf.get(token);
    if (known) return known;
    const m = new Map<string, number>();
    simsOf.set(token, m);
    for (const k of keysOf(token)) for (const v of index.vocabulary.get(k) ?? []) {
      // a token of three letters meets, by its ends, tokens of up to five ("jan", "janan"); longer
      // ones ("ali", "alimov") are other names, and only made candidates to score
      if (m.has(v) || (Math.min(token.length, v.length) === 3 && Math.abs(token.length - v.length) > 2)) continue;
      const sim = jaroWinkler(token, v);
      if (sim >= PAIR_THRESHOLD) m.set(v, sim);
    }
    return m;
  });
  const candidates = new Set<number>();
  for (const m of simsOf.values()) for (const v of m.keys()) for (const id of index.byToken.get(v)!) candidates.add(id);
  const best = new Map<number, Match>();
  for (const id of candidates) {
    const n = index.names[id]!;
    const entry = index.entries[n.entry]!;
    if (q.lists && !q.lists.includes(entry.list)) continue;
    const exact = n.joined === joined;
    const sim: NameSimilarity = exact ? { score: 1, pairs: qt.map((t) => ({ query: t, matched: t, similarity: 1 })), unmatched: [], nameCoverage: 1, exactTokens: qt.length, spelledPairs: qs.map((t) => ({ q: t, c: t, s: 1 })), leftover: 0 } : pairUp(qt, n.tokens, sims, n.spelled, qs, n.weight);
    const weakAlias = n.quality === 'low' || n.quality === 'weak';
    // a person's name of one word ("Hassan", or "HASSAN, Sheikh" once the title is dropped) is a
    // common given name whatever quality the list gives it: alone it is a potential match at most
    const oneWord = entry.entry_type === 'person' && n.tokens.length === 1;
    // a rare token of the list name identical to the query's: what says this is the listed one
    const rareAnchor = sim.spelledPairs.some((p) => p.s === 1 && !n.common.has(p.c));
    // every pair a near spelling (identical, Jaro–Winkler ≥ 0.9, or one edit apart)
    const allNear = sim.spelledPairs.every((p) => p.s === 1 || isNear(p.q, p.c, p.s));
    const contained = !exact && n.tokens.length >= 2 && sim.nameCoverage >= CONTAINED_COVERAGE && CONTAINED_NAME_WEIGHT * sim.nameCoverage > sim.score;
    // (a one-word name is bounded by WEAK_ALIAS_WEIGHT already: a near spelling of a long one, HIDAYTAULLAH, stays a potential match)
    const similarOnly = !oneWord && !sim.exactTokens && sim.score > SIMILAR_ONLY_MAX;
    // only common words of the list name identical, the rest of it unpaired or loosely paired
    // (not when three tokens or more are the very ones: "Ali Hassan al-Majid" says who is meant)
    const partialCommon = !exact && !rareAnchor && sim.exactTokens < 3 && sim.leftover >= 0.75;
    // no identical token, and a pair only loosely similar
    const looseSimilar = !sim.exactTokens && !allNear;
    // the query found whole within a longer list name (every token identical, parts left over)
    const wholeScore = FOUND_WHOLE_MIN + COUNTRY_AGREES * sim.nameCoverage;
    const foundWhole = !exact && !partialCommon && qt.length >= 2 && sim.exactTokens === qt.length && sim.nameCoverage < 1 && wholeScore > sim.score;
    let pairedScore = contained ? CONTAINED_NAME_WEIGHT * sim.nameCoverage : similarOnly ? SIMILAR_ONLY_MAX : foundWhole ? wholeScore : sim.score;
    if (partialCommon) pairedScore = Math.min(pairedScore, PARTIAL_COMMON_MAX);
    if (looseSimilar) pairedScore = Math.min(pairedScore, LOOSE_SIMILAR_MAX);
    // a query of common words only, none of whose tokens is identical to the name's ("Aleksandra
    // Volkova", "Yelena Morozov" for "Aleksandr Volkov", "Elena Morozova"): no more than those words
    // found within a longer name say (partialCommon), so such a name never outranks one holding them
    const similarCommon = !oneWord && !sim.exactTokens && queryAllCommon;
    if (similarCommon) pairedScore = Math.min(pairedScore, PARTIAL_COMMON_MAX);
    const nameScore = weakAlias || oneWord ? pairedScore * WEAK_ALIAS_WEIGHT : pairedScore;
    // a one-word query one edit from a person's one-word name of six letters or more, neither word
    // common ("Hidaytaullah"): kept for review below whatever its name score (a letter replaced in
    // seven letters scores 0.84 as a one-word name)
    const oneWordNear = oneWord && qt.length === 1 && !exact && sim.pairs.length === 1 && n.spelled[0]!.length >= ONE_WORD_NEAR_LETTERS && !n.common.has(n.spelled[0]!) && !queryAllCommon && isNearPair(qs[0]!, n.spelled[0]!, 0, qt[0]!, n.tokens[0]!);
    // identical: the same words, in any order ("Chol Song Jang" is "JANG SONG CHOL")
    const identical = exact || (sim.exactTokens === qt.length && qt.length === n.tokens.length);
    // the list's name whole within the query, one word more ("Muhammad Yassin Syawal" for YASSIN
    // SYAWAL, "Eric Mutombo Badege", "Shamsuddin Ahmad" for SHAMSUDDIN): a middle name, a "bin" or
    // a surname the list leaves out is how an onboarding form writes the listed person. Every word of
    // the name identical, not all of them words many people share (nor a one-word name's)
    // (a one-word name only a person's primary name of six letters or more, no word many share: an
    // alias "Adel" or "Bilal", or an organisation's "NATA" or "ISI", is too many people's first word)
    const nameWithin =
      !identical && qt.length === n.tokens.length + 1 && sim.exactTokens === n.tokens.length && sim.pairs.length === n.tokens.length &&
      (q.type === 'any' || q.type === entry.entry_type) &&
      (oneWord
        ? n.kind === 'primary' && n.spelled[0]!.length >= ONE_WORD_NEAR_LETTERS && !n.common.has(n.spelled[0]!) // (common: shared by many entries, or a built-in word)
        : n.tokens.length >= 2 && !n.spelled.every((t) => n.common.has(t)));
    if (nameScore < q.min_score - 0.1 && !oneWordNear && !nameWithin) continue; // attributes can add at most 0.05
    const birth = entry.entry_type === 'person' ? birthAgreement(entry.births, q.birth_date) : 'unknown';
    const country: Agreement = !q.country || !entry.countries.length ? 'unknown' : entry.countries.includes(q.country) ? 'agrees' : 'disagrees';
    const type: Agreement = q.type === 'any' ? 'unknown' : q.type === entry.entry_type ? 'agrees' : 'disagrees';
    let score = nameScore;
    if (birth === 'agrees') score += BIRTH_AGREES;
    if (birth === 'disagrees') score += BIRTH_DISAGREES;
    if (country === 'agrees') score += COUNTRY_AGREES;
    if (country === 'disagrees') score += COUNTRY_DISAGREES;
    if (type === 'disagrees') score += TYPE_DISAGREES;
    // a list name made only of tokens many entries share ("Ali Mohammed") names thousands of people,
    // and so does one whose only identical tokens are common ("Ibrahim Camará" for "IBRAIMA CAMARÁ"):
    // without a birth date or country agreeing it is a potential match at most, never a match
    const commonOnly = !rareAnchor && birth !== 'agrees' && country !== 'agrees' && !(sim.exactTokens === qt.length && qt.length === n.tokens.length && qt.length >= 3);
    if (commonOnly) score = Math.min(score, COMMON_NAME_CAP);
    // the list's very name (not a weak alias) is reviewed, never cleared by a birth date or country
    // that disagrees: lists' dates are often wrong, and listed people travel on other papers. Every
    // token of the name given, so even a name of common words ("Tariq Aziz", "Mohamed Omar Mohamed"):
    // the common-word caps are for a query holding only some of a name's words
    // near-identical: as many tokens, all paired, one at least identical, and the others each at
    // Jaro–Winkler ≥ 0.9 — or one only, one edit apart, as compared or as written ("Erik Badege",
    // "Jang Song Chul", "Abdul Bari Akuhnd"; not "Jang Sang Chul")
    const fuzzy = sim.spelledPairs.flatMap((p, i) => (p.s < 1 ? [{ ...p, shown: sim.pairs[i]! }] : []));
    const nearIdentical = !identical && qt.length === n.tokens.length && sim.pairs.length === qt.length && sim.exactTokens > 0 && (fuzzy.every((p) => p.s >= NEAR_SIMILARITY) || (fuzzy.length === 1 && isNearPair(fuzzy[0]!.q, fuzzy[0]!.c, fuzzy[0]!.s, fuzzy[0]!.shown.query, fuzzy[0]!.shown.matched)));
    // one word: a person's name of one word of four letters or more the list's entries do not
    // share, the very word ("HIDAYATULLAH"; not "Hassan"), or one edit from it (oneWordNear above)
    const oneWordKept = oneWord && identical && n.spelled[0]!.length >= ONE_WORD_FLOOR_LETTERS && !n.shared.has(n.spelled[0]!);
    // words of the name, each given as the list writes it, two at least, born the same day as the
    // listed person ("Sergey Ivanov" born on SERGEY IVANOVICH IVANOV's birthday: a patronymic or
    // second surname left out is how such a name is usually written): reviewed, however common the
    // words. A birth year alone (±1) does not do it: "Ahmed Mohamed" born in 1970 would be every
    // listed AHMED … MOHAMED born 1969–1971
    const givenWithBirth = entry.entry_type === 'person' && bornSameDay(entry.births, q.birth_date) && qt.length >= 2 && sim.exactTokens === qt.length && sim.pairs.length === qt.length;
    const keptForReview = !weakAlias && score < IDENTICAL_NAME_MIN && (oneWordNear || givenWithBirth || nameWithin || ((identical || nearIdentical) && (n.tokens.length >= 2 || oneWordKept) && nameScore >= IDENTICAL_NAME_MIN));
    if (keptForReview) score = IDENTICAL_NAME_MIN;
    // a `match` says the listed person is meant: a name spelt otherwise than the list writes it (a
    // letter off, or words left out or added) is one only with a birth date or country agreeing;
    // alone it is a potential match ("Kim Yong Il" for KIM KYONG IL, "Bambang Sukirmo")
    // (an initial the query leaves out is no other spelling: "Erik Badegov" is ERIK P. BADEGOV)
    const withoutInitials = sim.exactTokens === qt.length && sim.pairs.length === qt.length && n.tokens.length - qt.length <= n.tokens.filter((t) => t.length === 1).length;
    const uncorroborated = !identical && !withoutInitials && birth !== 'agrees' && country !== 'agrees';
    const capped = uncorroborated && score >= MATCH_SCORE;
    if (capped) score = MATCH_SCORE - 0.01;
    score = round3(Math.max(0, Math.min(1, score)));
    if (score < q.min_score) continue;
    const previous = best.get(n.entry);
    if (previous && (previous.score > score || (previous.score === score && previous.exactTokens >= sim.exactTokens))) continue;
    const matchType = exact ? (n.kind === 'primary' ? 'exact' : 'alias') : n.kind === 'primary' ? 'fuzzy' : sim.score >= 0.99 ? 'alias' : 'fuzzy';
    const agreed = Object.entries({ birth_date: birth, country, type }).filter(([, v]) => v !== 'unknown').map(([k, v]) => `${k} ${v}`);
    best.set(n.entry, {
      entry,
      matched_name: n.name,
      score,
      match_type: matchType,
      exactTokens: sim.exactTokens,
      explanation: {
        summary: `${exact ? 'same name' : `${sim.pairs.length} of ${qt.length} tokens paired`} with the list's ${n.kind === 'primary' ? 'name' : n.kind === 'alias' ? `${weakAlias ? `${n.quality} ` : ''}alias` : 'original-script name'} "${n.name}"${oneWord ? ' (one word)' : ''}${contained ? ' (found whole within a longer name)' : ''}${foundWhole ? ' (every query token within a longer name)' : ''}${(similarOnly || looseSimilar) && !contained ? ` (${looseSimilar ? 'loosely ' : ''}similar tokens only, none identical)` : ''}${partialCommon && sim.exactTokens ? ' (common words only of a longer name)' : ''}${similarCommon ? ' (common words only, none identical)' : ''}${commonOnly && nameScore > COMMON_NAME_CAP ? ' (common names only, nothing else agreeing)' : ''}${keptForReview ? (givenWithBirth && !identical && !nearIdentical && !oneWordNear && !nameWithin ? ' (words of the name, born the same day: reviewed)' : ` (${nearIdentical || oneWordNear ? 'a near spelling of the name' : nameWithin ? 'the name within a longer one' : 'the same name'}: reviewed, whatever attributes disagree)`) : ''}${capped ? ' (spelt otherwise, nothing else agreeing: a potential match at most)' : ''}${agreed.length ? `; ${agreed.join(', ')}` : ''}`,
        tokens: sim.pairs,
        unmatched_tokens: sim.unmatched,
        name_score: round3(nameScore),
        alias_quality: n.quality,
        attributes: { birth_date: birth, country, type },
      },
    });
  }
  // best first; among equal (rounded) scores, the name agreeing on more identical tokens
  return [...best.values()].sort((a, b) => b.score - a.score || b.exactTokens - a.exactTokens || a.entry.entry_id.localeCompare(b.entry.entry_id));
}
