/**
 * The one company-form recogniser (src/lib/company-form.ts): a name as written (KYC, the NIF
 * lookup) by the form's shape, never the surname Sá for "SA"; shapeless text (AML tokens, a bank's
 * capitals in reconcile) by the letters alone, alike on both sides.
 */
import { describe, expect, test } from 'bun:test';
import { companyForms, formWordsAtEnd, isCompanyName, legalFormOf } from '../src/lib/company-form';
import { isOrganisation } from '../src/features/kyc/service';
import { tokens } from '../src/features/aml/matcher';
import { samePayer } from '../src/features/reconcile/engine';

describe('a name as written', () => {
  test('persons, however a surname looks like a form (Sá, Co, Bank), are not companies', () => {
    for (const name of ['Rui Sá', 'Maria de Sá', 'Rui Sa', 'RUI SA', 'MARIA DE SÁ', 'Rui Sá ', 'rui sa', 'Nguyen Thi Co', 'Anna Bank', 'Joan Company', 'João Silva', 'Ana Sá Pereira'])
      expect({ name, company: isCompanyName(name), form: legalFormOf(name) }).toEqual({ name, company: false, form: null });
  });

  test('Portuguese forms: S.A., Lda, Unipessoal Lda, SGPS, CRL', () => {
    const cases: [string, string | null][] = [
      ['Sá & Filhos, Lda', 'Sociedade por quotas'], // a company named after a Sá
      ['Rui Sá, Lda', 'Sociedade por quotas'],
      ['ACME, S.A.', 'Sociedade anónima'],
      ['Acme SA', 'Sociedade anónima'], // capitals in a mixed-case name
      ['ACME, SA', 'Sociedade anónima'], // the last word after a comma
      ['Acme, Sa', 'Sociedade anónima'],
      ['Acme S. A.', 'Sociedade anónima'],
      ['Acme S A', 'Sociedade anónima'],
      ['SONAE SGPS SA', 'Sociedade anónima'], // all capitals, but after another form
      ['Alfa Holdings SGPS, S.A.', 'Sociedade anónima'],
      ['Padaria Central Unipessoal Lda', 'Sociedade unipessoal por quotas'],
      ['Sandbox Epsilon, Unipessoal Lda.', 'Sociedade unipessoal por quotas'],
      ['Empresa Exemplo, L.da', 'Sociedade por quotas'],
      ['Metalúrgica Limitada', 'Sociedade por quotas'],
      ['Cooperativa Agrícola de X, CRL', 'Cooperativa'],
      ['Cooperativa Agrícola do Vale', 'Cooperativa'], // its name says so without the ending
      ['Holding Exemplo, SGPS', null], // a holding, its form not said
      ['Sociedade Agrícola do Vale', null],
    ];
    for (const [name, form] of cases) expect({ name, company: isCompanyName(name), form: legalFormOf(name) }).toEqual({ name, company: true, form });
  });

  test('odd spacing, case and punctuation', () => {
    for (const name of ['  acme   ,   s.a.  ', 'Beta ,LDA.', 'beta lda', 'BETA LDA', 'Beta\u00a0Lda', 'Beta, lda.', 'Beta,Lda', 'Alfa (SGPS)', 'Acme s.a'])
      expect({ name, company: isCompanyName(name) }).toEqual({ name, company: true });
    // an accent typed as a combining mark is the same Sá
    expect(isCompanyName('Rui Sa\u0301')).toBe(false);
    expect(isCompanyName('Rui SA\u0301')).toBe(false);
  });

  test('foreign forms: recognised, no Portuguese legal form', () => {
    for (const name of ['Acme GmbH', 'Fiat S.p.A.', 'Shell B.V.', 'Shell BV', 'Tanchon Commercial Bank, Ltd', 'Acme Inc.', 'Deutsche Bank AG', 'Acme Trading COMPANY'])
      expect({ name, company: isCompanyName(name), form: legalFormOf(name) }).toEqual({ name, company: true, form: null });
    expect(isCompanyName('Smith & Co')).toBe(false); // "Co" is a name too: only as "CO" or after a comma
    expect(isCompanyName('Smith & CO')).toBe(true);
  });

  test('a form alone names no company; the forms a name ends with, in order', () => {
    for (const name of ['Lda', 'S.A.', 'SA', ''])
      expect({ name, company: isCompanyName(name) }).toEqual({ name, company: false });
    expect(companyForms('Padaria Central, Unipessoal, Lda.').map((f) => f.letters)).toEqual(['unipessoal', 'lda']);
    expect(companyForms('Maria de Sá')).toEqual([]);
  });

  test('a holder known to be a company (by its NIF): an all-capitals "SA" is its form; an accented Sá still is not', () => {
    expect(legalFormOf('EDP SA')).toBeNull();
    expect(legalFormOf('EDP SA', { knownCompany: true })).toBe('Sociedade anónima');
    expect(legalFormOf('RUI SÁ', { knownCompany: true })).toBeNull();
    expect(legalFormOf('Rui Sa', { knownCompany: true })).toBeNull();
  });

  test('public bodies: a legal form, not a company', () => {
    expect(legalFormOf('Município de Leiria')).toBe('Pessoa coletiva pública');
    expect(legalFormOf('Agrupamento de Escolas de Alvalade')).toBe('Pessoa coletiva pública');
    expect(isCompanyName('Município de Leiria')).toBe(false);
  });

  test('KYC: a representative named so is an organisation; by a NIF, the NIF says', () => {
    expect(isOrganisation({ name: 'Rui Sá' })).toBe(false);
    expect(isOrganisation({ name: 'Cooperativa Agrícola de X, CRL' })).toBe(true);
    expect(isOrganisation({ name: 'Rui Sá', nif: '599000023' })).toBe(true);
    expect(isOrganisation({ name: 'Acme, S.A.', nif: '123456789' })).toBe(false);
  });
});

describe('text that has lost its shape (letters alone, both sides alike)', () => {
  test('the form words at the end, spelt ones as one; never the whole text', () => {
    const at = (s: string) => formWordsAtEnd(s.split(' '));
    expect(at('SANDBOX BETA SA')).toBe(1);
    expect(at('SANDBOX BETA S A')).toBe(2);
    expect(at('PADARIA CENTRAL UNIPESSOAL LDA')).toBe(2);
    expect(at('METALURGICA DO VOUGA L DA')).toBe(2);
    expect(at('COOPERATIVA AGRICOLA DE X CRL')).toBe(1);
    expect(at('ACME GMBH')).toBe(1);
    expect(at('METALURGICA DO VOUGA L')).toBe(0);
    expect(at('LDA')).toBe(0);
    expect(at('S A')).toBe(0); // spelt, it is the whole text
  });

  test('reconcile: a payer printed by a bank is its invoice\'s customer, a Sá too', () => {
    expect(samePayer('RUI SA', 'Rui Sá')).toBe(true);
    expect(samePayer('SA E FILHOS LDA', 'Sá & Filhos, Lda')).toBe(false); // "&" is printed, "E" is another word
    expect(samePayer('SA & FILHOS', 'Sá & Filhos, Lda')).toBe(true);
    expect(samePayer('ACME LIMITED', 'Acme Ltd')).toBe(true);
    expect(samePayer('COOPERATIVA AGRICOLA DE X', 'Cooperativa Agrícola de X, CRL')).toBe(true);
    expect(samePayer('PADARIA CENTRAL LDA', 'Padaria Central Unipessoal Lda')).toBe(true);
    // SU (sociedade unipessoal) is a form on a bank's print
    expect(samePayer('ALFA SU LDA', 'Alfa Lda')).toBe(true);
    expect(samePayer('ALFA SU', 'Alfa')).toBe(true);
    // a foreign form that is also a word is kept: another payer
    expect(samePayer('HOTEL LISBOA SPA', 'Hotel Lisboa')).toBe(false);
    expect(samePayer('TERMAS SPA', 'Termas Lda')).toBe(false);
    expect(samePayer('BETA AG', 'Beta Lda')).toBe(false);
    expect(samePayer('JOAO SILVA CO', 'Joao Silva')).toBe(false);
    // a foreign form spelt on one side and run together on the other is the same word; after another form, a form
    expect(samePayer('ACME SPA', 'Acme S.p.A.')).toBe(true);
    expect(samePayer('ACME SL', 'Acme, S.L.')).toBe(true);
    expect(samePayer('ACME', 'Acme Co., Ltd.')).toBe(true);
    expect(samePayer('SANDBOX BETA', 'Sandbox Beta, S. A.')).toBe(true);
  });

  test('AML: forms set aside in the query and the list alike', () => {
    expect(tokens('Cooperativa Agrícola de X, CRL')).toEqual(['cooperativa', 'agricola', 'x']);
    expect(tokens('Alfa Holdings SGPS, S.A.')).toEqual(['alfa', 'holdings']);
    expect(tokens('Rui Sá')).toEqual(tokens('RUI SA'));
    // ACE and SU are words and syllables of names: screened on, initials kept
    expect(tokens('Ace Ltd')).toEqual(['ace']);
    expect(tokens('Ahmed A C E')).toEqual(['ahmed', 'a', 'c']); // ("e" is the connective "and")
    expect(tokens('Kim Su')).toEqual(['kim', 'su']);
  });
});
