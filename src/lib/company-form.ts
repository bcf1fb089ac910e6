/**
 * Whether a name is a company's, by the company form it ends with ("Beta, Lda", "Alfa Holdings
 * SGPS, S.A.", "Padaria Central Unipessoal Lda", "Cooperativa Agrícola de X, CRL", "Acme GmbH") or
 * a word only a company's name holds (SGPS, Sociedade, Cooperativa). Pure. One table of forms serves
 * KYC (is a representative an organisation?), the NIF lookup (which legal form?), AML and reconcile
 * (which words of a name say nothing of who is meant?).
 *
 * Two readings, for two kinds of text:
 * - a name as written (companyForms, isCompanyName, legalFormOf): a form whose letters are also a
 *   name or a word ("SA" and the surname Sá, "Co", "Ace") is a form only in an abbreviation's
 *   shape — dotted or spelt ("S.A.", "S. A."), in capitals in a name written in mixed case ("Acme
 *   SA"), after a comma ("ACME, SA"), after another form ("SONAE SGPS SA"), or in capitals when the
 *   caller knows the holder is a company. "Rui Sá", "Maria de Sá", "Rui Sa", "RUI SA" are persons.
 * - text that has lost its shape (a bank's ASCII capitals, transliterated match tokens):
 *   formWordsAtEnd and FORM_LETTERS go by the letters alone. Their callers compare two such texts
 *   and set the same words aside on both sides, so "RUI SA" and "Rui Sá" still agree.
 */

export interface FormDef {
  /** its letters, lower case, without dots or spaces */
  letters: string;
  /** the Portuguese legal form it states (null: foreign, or not a form by itself, as SGPS) */
  legalForm: string | null;
  /** its letters are also a name or a word: recognised in a name as written only by its shape */
  nameWord: boolean;
}

const QUOTAS = 'Sociedade por quotas';
const UNIPESSOAL = 'Sociedade unipessoal por quotas';
const ANONIMA = 'Sociedade anónima';
const COOPERATIVA = 'Cooperativa';
const PUBLIC_BODY = 'Pessoa coletiva pública';

const F = (letters: string, legalForm: string | null = null, nameWord = false): FormDef => ({ letters, legalForm, nameWord });

/** Company forms: Portuguese, then the foreign ones a Portuguese business meets (as customers, on lists). */
const FORMS: readonly FormDef[] = [
  F('lda', QUOTAS), // also written "L.da"
  F('limitada', QUOTAS),
  F('unipessoal', UNIPESSOAL),
  F('sa', ANONIMA, true), // the surname Sá
  F('sgps'), // a holding: an S.A. or a Lda, said by the form beside it
  F('crl', COOPERATIVA),
  F('eirl', 'Estabelecimento individual de responsabilidade limitada'),
  F('ace', 'Agrupamento complementar de empresas', true),
  F('su', UNIPESSOAL, true), // "sociedade unipessoal"; also a syllable of Korean and Chinese names
  F('ltd'), F('limited'), F('llc'), F('inc'), F('plc'), F('corp'), F('corporation'), F('company', null, true), // the Catalan surname Company
  F('gmbh'), F('bv'), F('nv'), F('srl'), F('sarl'),
  F('co', null, true), F('ag', null, true), F('sl', null, true), F('sas', null, true), F('spa', null, true),
];
const BY_LETTERS = new Map(FORMS.map((f) => [f.letters, f]));

/** every form's letters (lower case): for text that has lost its shape, compared with like text */
export const FORM_LETTERS: ReadonlySet<string> = new Set(BY_LETTERS.keys());
/**
 * The forms a bank's print is read without (reconcile): every form but the foreign ones that are
 * also words (a "HOTEL LISBOA SPA", a "BETA AG" and a "JOAO SILVA CO" are not Hotel Lisboa, Beta
 * Lda or Joao Silva); the Portuguese ones that are also names (SA, ACE, SU) stay forms, as banks print them.
 */
export const PRINT_FORM_LETTERS: ReadonlySet<string> = new Set(FORMS.filter((f) => !f.nameWord || f.legalForm !== null).map((f) => f.letters));

/** words only a company's name holds, wherever they stand ("Sociedade Agrícola do Vale", "Sonae SGPS") */
const COMPANY_WORDS = new Set(['sgps', 'sociedade', 'cooperativa']);

/** the longest run of short words (a spelt form: "S A", "L DA", "S. p. A.") tried as one */
const MAX_SPELT = 4;

interface Word {
  /** as written, without the dots at its end */
  text: string;
  /** lower case; dots gone; accents kept ("sá" is not "sa") */
  letters: string;
  /** a dot between two of its letters ("S.A", "L.da", "S.p.A") */
  dotted: boolean;
  /** a comma stands before it */
  afterComma: boolean;
}

/** A name's words with their shape: NFC (one "á", however typed), commas kept as a fact of the next word. */
function wordsOf(name: string): Word[] {
  const out: Word[] = [];
  let comma = false;
  for (const m of name.normalize('NFC').matchAll(/,|[^\s,]+/gu)) {
    if (m[0] === ',') {
      comma = true;
      continue;
    }
    const text = m[0].replace(/\.+$/, '');
    if (text) out.push({ text, letters: text.replace(/\./g, '').toLowerCase(), dotted: /\p{L}\.\p{L}/u.test(text), afterComma: comma });
    comma = false;
  }
  return out;
}

const hasLower = (s: string) => /\p{Ll}/u.test(s);
const isCaps = (s: string) => /\p{Lu}/u.test(s) && !hasLower(s);

export interface FormOptions {
  /**
   * The caller knows the holder is a company (a NIF whose holder type is one): an undotted form in
   * capitals counts even in a name written all in capitals ("EDP SA" from a bureau's record).
   */
  knownCompany?: boolean;
}

/**
 * The forms a name as written ends with, in order ("Epsilon, Unipessoal Lda." → unipessoal, lda).
 * Never the whole name: "Lda" or "S.A." alone names no company.
 */
export function companyForms(name: string, opts: FormOptions = {}): FormDef[] {
  const words = wordsOf(name);
  const mixedCase = hasLower(name);
  const forms: FormDef[] = [];
  let end = words.length;
  while (end > 1) {
    const found = formEndingAt(words, end, mixedCase, opts);
    if (!found) break;
    forms.unshift(found.form);
    end -= found.size;
  }
  return forms;
}

function formEndingAt(words: Word[], end: number, mixedCase: boolean, opts: FormOptions): { form: FormDef; size: number } | null {
  for (let size = 1; size <= MAX_SPELT && size < end; size++) {
    const group = words.slice(end - size, end);
    // a form spelt over several words is made of short ones ("S. A.", "L. da"), nothing else
    if (size > 1 && group.some((w) => w.letters.length > 2)) break;
    const form = BY_LETTERS.get(group.map((w) => w.letters).join(''));
    if (!form) continue;
    if (!form.nameWord || abbreviated(words, end - size, group, mixedCase, opts)) return { form, size };
  }
  return null;
}

/** whether a form that is also a name or word ("SA", "Co") is written as a form: see the module's comment */
function abbreviated(words: Word[], start: number, group: Word[], mixedCase: boolean, opts: FormOptions): boolean {
  const w = group[0]!;
  if (group.length > 1 || w.dotted || w.afterComma) return true; // "S. A.", "S.A.", "Acme, SA"
  if (!isCaps(w.text)) return false; // "Rui Sa": written as a name
  if (mixedCase || opts.knownCompany) return true; // "Acme SA"; "EDP SA" of a company's NIF
  // a name all in capitals ("RUI SA") says nothing by its case: only another form before it does
  const prev = BY_LETTERS.get(words[start - 1]!.letters);
  return !!prev && !prev.nameWord; // "SONAE SGPS SA"
}

/** Whether a name as written is a company's: a form ends it, or a word only a company's name holds is in it. */
export function isCompanyName(name: string, opts: FormOptions = {}): boolean {
  if (companyForms(name, opts).length) return true;
  // a word among other signs: "(SGPS)", "Alfa-SGPS"
  return wordsOf(name).some((w) => plain(w.letters).split(/[^\p{L}]+/u).some((part) => COMPANY_WORDS.has(part)));
}

/** accents aside, for words that carry no surname ("Município", "Cooperativa") */
const plain = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '');

/**
 * The Portuguese legal form a name as written states: by the forms that end it ("Unipessoal Lda":
 * a sociedade unipessoal por quotas; "SGPS, S.A.": an S.A.), else by how a cooperative or a public
 * body's name begins; null when it does not say (a person's name, a foreign form, SGPS alone).
 */
export function legalFormOf(name: string, opts: FormOptions = {}): string | null {
  const forms = companyForms(name, opts);
  const last = forms.at(-1);
  if (last && (last.legalForm === QUOTAS || last.legalForm === UNIPESSOAL) && forms.some((f) => f.legalForm === UNIPESSOAL)) return UNIPESSOAL;
  if (last?.legalForm) return last.legalForm;
  const start = plain(name.normalize('NFC').trim()).toLowerCase();
  if (/^cooperativa\b/.test(start)) return COOPERATIVA;
  if (/^municipio\b|^agrupamento de escolas\b/.test(start)) return PUBLIC_BODY;
  return null;
}

/**
 * For text that has lost its shape (one case, punctuation gone, accents transliterated): how many
 * of its last words are company forms, a form spelt over short words ("S A", "L DA") as one; never
 * all of them ("LDA" alone stays). `forms`: the forms read as such on their own; any other form
 * counts right before one of them ("ACME CO LTD": after LTD, CO is a form too). The same words are
 * set aside on both sides of a comparison.
 */
export function formWordsAtEnd(words: readonly string[], forms: ReadonlySet<string> = FORM_LETTERS): number {
  let end = words.length;
  outer: while (end > 1) {
    for (let size = 1; size <= MAX_SPELT && size < end; size++) {
      const group = words.slice(end - size, end);
      if (size > 1 && group.some((w) => w.length > 2)) break;
      const letters = group.join('').toLowerCase();
      if (forms.has(letters) || (end < words.length && FORM_LETTERS.has(letters))) {
        end -= size;
        continue outer;
      }
    }
    break;
  }
  return words.length - end;
}
