/**
 * POST /v1/kyc/verify (issue 19): the checks and the outcome rule on the sandbox fixtures and the
 * UN list, errors with field paths, storage and reading by id, scope and tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { KycResponse } from '../src/features/kyc/model';
import { loadConfiguredLists } from '../src/features/aml';
import { nifCheckDigit } from '../src/lib/nif';
import { and, eq } from 'drizzle-orm';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp();
  key = (await h.tenant()).api_key;
  await loadConfiguredLists(h.ctx);
});
afterAll(() => h.close());

const verify = (body: unknown, k = key) => h.json('POST', '/v1/kyc/verify', { key: k, body });
const resultOf = (b: any, check: string, subject?: string) => b.checks.find((c: any) => c.check === check && (subject === undefined || c.subject === subject))?.result;
const personalNif = (first8: string) => first8 + nifCheckDigit(first8);

describe('POST /v1/kyc/verify', () => {
  test('a clean, active company with clean representatives: pass, every check passed, screenings stored', async () => {
    const r = await verify({
      nif: '599000015',
      representatives: [
        { name: 'Ana Rita Costa', birth_date: '1975-04-12', nif: personalNif('21234567'), nationality: 'PT', role: 'manager' },
        { name: 'Pedro Nuno Marques', role: 'beneficial_owner' },
      ],
      customer_reference: 'onb-42',
    });
    expect(r.status).toBe(200);
    expect(Value.Check(KycResponse, r.body)).toBe(true);
    expect(r.body.outcome).toBe('pass');
    expect(r.body.checks.map((c: any) => c.check)).toEqual(['nif_valid', 'entity_is_company', 'company_found_active', 'sanctions_screening', 'legal_representatives_identified', 'beneficial_owners_identified', 'representative_nif_valid', 'sanctions_screening', 'sanctions_screening', 'legal_events']);
    expect(r.body.checks.every((c: any) => c.result === 'pass')).toBe(true);
    expect(r.body.company.company.name).toBe('Sandbox Alfa, Lda.');
    expect(r.body.screenings.map((s: any) => s.subject)).toEqual(['Sandbox Alfa, Lda.', 'Ana Rita Costa', 'Pedro Nuno Marques']);
    for (const s of r.body.screenings) expect((await h.json('GET', `/v1/aml/screenings/${s.screening_id}`, { key })).body.customer_reference).toBe('onb-42');
    expect((await h.json('GET', `/v1/kyc/verifications/${r.body.verification_id}`, { key })).body).toEqual(r.body);
  });

  test('fail: a listed representative; an insolvent company; a natural person\'s NIF; a wrong check digit', async () => {
    const listed = await verify({ nif: '599000015', representatives: [{ name: 'Eric Badege', birth_date: '1971', role: 'director' }] });
    expect(listed.body.outcome).toBe('fail');
    expect(resultOf(listed.body, 'sanctions_screening', 'Eric Badege')).toBe('fail');
    // a representative named by one common word, a listed alias ("Hassan"): for a person to review, not a fail
    const oneWord = await verify({ nif: '599000015', representatives: [{ name: 'Hassan', role: 'gerente' }] });
    expect(resultOf(oneWord.body, 'sanctions_screening', 'Hassan')).toBe('review');
    expect(oneWord.body.outcome).toBe('review');
    const insolvent = await verify({ nif: '599000112', representatives: [] });
    expect(insolvent.body.outcome).toBe('fail');
    expect(resultOf(insolvent.body, 'company_found_active')).toBe('fail');
    expect(resultOf(insolvent.body, 'legal_events')).toBe('fail');
    const person = await verify({ nif: '123456789', representatives: [] });
    expect(person.body.outcome).toBe('fail');
    expect(resultOf(person.body, 'entity_is_company')).toBe('fail');
    expect(person.body.company.company).toBeNull();
    const bad = await verify({ nif: '599000011', representatives: [] });
    expect(bad.body.outcome).toBe('fail');
    expect(resultOf(bad.body, 'nif_valid')).toBe('fail');
  });

  test('review: a potential match, a recent default, an unknown company, a representative NIF that is a company\'s', async () => {
    const potential = await verify({ nif: '599000015', representatives: [{ name: 'Erik Badeje', role: 'director' }] });
    expect(resultOf(potential.body, 'sanctions_screening', 'Erik Badeje')).toBe('review');
    expect(potential.body.outcome).toBe('review');
    const defaulted = await verify({ nif: '599000040', representatives: [] });
    expect(resultOf(defaulted.body, 'legal_events')).toBe('review');
    expect(defaulted.body.outcome).toBe('review');
    const unknown = await verify({ nif: personalNif('51111111'), representatives: [] });
    expect(unknown.body.outcome).toBe('review');
    expect(resultOf(unknown.body, 'company_found_active')).toBe('review');
    expect(resultOf(unknown.body, 'sanctions_screening')).toBe('not_available');
    expect(resultOf(unknown.body, 'legal_events')).toBe('not_available');
    // a company without scoring data (no bureau events, no credit register): its legal events are not known, not clean
    const noData = await verify({ nif: '599000104', representatives: [] });
    expect(noData.body.checks.find((c: any) => c.check === 'legal_events')).toMatchObject({ result: 'not_available', detail: 'no insolvency, default or litigation records for this company' });
    expect(noData.body.outcome).toBe('review');
    const companyNif = await verify({ nif: '599000015', representatives: [{ name: 'Rui Santos', nif: '599000023', role: 'manager' }] });
    expect(resultOf(companyNif.body, 'representative_nif_valid')).toBe('review');
    // a number GET /v1/nif calls invalid (an unassigned prefix) and the final consumer's placeholder are no one's: fail
    for (const nif of ['000000000', '999999990']) {
      const noOne = await verify({ nif: '599000015', representatives: [{ name: 'Rui Santos', nif, role: 'manager' }] });
      expect(noOne.body.outcome).toBe('fail');
      expect(noOne.body.checks.find((c: any) => c.check === 'representative_nif_valid')).toMatchObject({ result: 'fail', detail: expect.stringContaining("not a holder's number") });
    }
    // a listed person's name within a longer one is reviewed, not passed
    const longer = await verify({ nif: '599000015', representatives: [{ name: 'Eric Mutombo Badege', birth_date: '1971', nationality: 'CD', role: 'beneficial_owner' }] });
    expect(longer.body.outcome).toBe('review');
    expect(longer.body.checks.find((c: any) => c.check === 'sanctions_screening' && c.subject === 'Eric Mutombo Badege')).toMatchObject({ result: 'review', detail: expect.stringContaining('CDi.001') });
  });

  test('errors with field paths; 404; scope; another tenant cannot read it', async () => {
    const cases: [unknown, string][] = [
      [{ representatives: [] }, 'nif'],
      [{ nif: '59900001', representatives: [] }, 'nif'],
      [{ nif: '599000015' }, 'representatives'],
      [{ nif: '599000015', representatives: [{ name: 'A B' }] }, 'representatives.0.role'],
      [{ nif: '599000015', representatives: [{ name: 'A B', role: 'x', birth_date: '12/03/1970' }] }, 'representatives.0.birth_date'],
      [{ nif: '599000015', representatives: [{ name: '!!!', role: 'x' }] }, 'representatives.0.name'],
      // titles, connectives and company forms alone name no one
      [{ nif: '599000015', representatives: [{ name: 'Ana Costa', role: 'x' }, { name: 'Lda', role: 'manager' }] }, 'representatives.1.name'],
      [{ nif: '599000015', representatives: [{ name: 'Dr.', role: 'manager' }] }, 'representatives.0.name'],
      // born after today
      [{ nif: '599000015', representatives: [{ name: 'Ana Costa', role: 'x', birth_date: '2199' }] }, 'representatives.0.birth_date'],
      [{ nif: '599000015', representatives: [{ name: 'Ana Costa', role: 'x', birth_date: '2199-01-31' }] }, 'representatives.0.birth_date'],
      [{ nif: '599000015', representatives: Array.from({ length: 21 }, () => ({ name: 'A B', role: 'x' })) }, 'representatives'],
    ];
    for (const [body, path] of cases) expect(expectError(await verify(body), 422, 'validation_failed').fields.map((f: any) => f.path)).toContain(path);
    expectError(await h.json('GET', '/v1/kyc/verifications/kyc_00000000-0000-7000-8000-000000000000', { key }), 404, 'resource_not_found');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await verify({ nif: '599000015', representatives: [] }, narrow.api_key), 403, 'insufficient_scope');
    const a = await h.tenant();
    const b = await h.tenant();
    const v = await verify({ nif: '599000015', representatives: [] }, a.api_key);
    expectError(await h.json('GET', `/v1/kyc/verifications/${v.body.verification_id}`, { key: b.api_key }), 404, 'resource_not_found');
  });

  test('the OpenAPI examples give the outcomes their summaries claim', async () => {
    const { body: doc } = await h.json('GET', '/openapi.json');
    const examples = doc.paths['/v1/kyc/verify'].post.requestBody.content['application/json'].examples as Record<string, { summary: string; value: unknown }>;
    expect(Object.keys(examples).length).toBeGreaterThanOrEqual(4);
    for (const [name, ex] of Object.entries(examples)) {
      const claimed = /: (pass|review|fail)\b/.exec(ex.summary)?.[1];
      const r = await verify(ex.value);
      expect([name, r.status, r.body.outcome]).toEqual([name, 200, claimed]);
    }
  });

  test('live keys without the live tier: 503 live_tier_not_available', async () => {
    const live = await h.tenant({ env: 'live' });
    expectError(await verify({ nif: '599000015', representatives: [] }, live.api_key), 503, 'live_tier_not_available');
  });
});

const count = async (tenantId: string) => {
  const { db, t } = h.ctx.database;
  const kyc = await db.select({ id: t.kycVerifications.id }).from(t.kycVerifications).where(and(eq(t.kycVerifications.tenantId, tenantId), eq(t.kycVerifications.env, 'sandbox')));
  const scr = await db.select({ id: t.amlScreenings.id }).from(t.amlScreenings).where(and(eq(t.amlScreenings.tenantId, tenantId), eq(t.amlScreenings.env, 'sandbox')));
  return { kyc: kyc.length, screenings: scr.length };
};
const checkOf = (b: any, check: string) => b.checks.find((c: any) => c.check === check);
const manager = { name: 'Ana Rita Costa', birth_date: '1975-04-12', nationality: 'PT', role: 'manager' };
const owner = { name: 'Pedro Nuno Marques', birth_date: '1969', role: 'beneficial_owner' };

describe('beneficial owners and legal representatives (Lei n.º 83/2017; RCBE, Lei n.º 89/2017)', () => {
  test('no representative at all: review, both identification checks say what to send', async () => {
    const r = await verify({ nif: '599000015', representatives: [] });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('review');
    expect(checkOf(r.body, 'legal_representatives_identified')).toEqual({ check: 'legal_representatives_identified', subject: '599000015', result: 'review', detail: expect.stringContaining('no representatives given') });
    const bo = checkOf(r.body, 'beneficial_owners_identified');
    expect(bo).toMatchObject({ subject: '599000015', result: 'review' });
    for (const words of ['more than 25 %', 'role beneficial_owner', 'ownership_pct', 'senior_managing_official']) expect(bo.detail).toContain(words);
    // every other check passed: the identification alone keeps it from passing
    expect(r.body.checks.filter((c: any) => c.result !== 'pass').map((c: any) => c.check)).toEqual(['legal_representatives_identified', 'beneficial_owners_identified']);
  });

  test('a manager without a beneficial owner, or a beneficial owner without a legal representative: review', async () => {
    const noOwner = await verify({ nif: '599000015', representatives: [manager] });
    expect(noOwner.body.outcome).toBe('review');
    expect(resultOf(noOwner.body, 'legal_representatives_identified')).toBe('pass');
    expect(resultOf(noOwner.body, 'beneficial_owners_identified')).toBe('review');
    const noManager = await verify({ nif: '599000015', representatives: [owner] });
    expect(noManager.body.outcome).toBe('review');
    expect(resultOf(noManager.body, 'legal_representatives_identified')).toBe('review');
    expect(resultOf(noManager.body, 'beneficial_owners_identified')).toBe('pass');
    // a role not recognised is screened and named, but counts as neither
    const other = await verify({ nif: '599000015', representatives: [{ name: 'Rui Santos', role: 'procurador' }, owner] });
    expect(checkOf(other.body, 'legal_representatives_identified')).toMatchObject({ result: 'review', detail: expect.stringContaining('roles not recognised: "procurador"') });
    expect(other.body.screenings.map((s: any) => s.subject)).toContain('Rui Santos');
  });

  test('both identified: pass; known aliases in Portuguese and English, whatever the case and accents', async () => {
    const both = await verify({ nif: '599000015', representatives: [manager, owner] });
    expect(both.body.outcome).toBe('pass');
    expect(checkOf(both.body, 'beneficial_owners_identified').detail).toBe('Pedro Nuno Marques (beneficial_owner)');
    for (const [lr, bo] of [['Gerente', 'Beneficiário Efetivo'], ['Sócio-Gerente', 'UBO'], ['administrador', 'beneficiario efectivo'], ['Representante Legal', 'Beneficial Owner']]) {
      const r = await verify({ nif: '599000015', representatives: [{ ...manager, role: lr }, { ...owner, role: bo }] });
      expect([lr, bo, r.body.outcome]).toEqual([lr, bo, 'pass']);
    }
  });

  test('ownership_pct: above 25 % makes a beneficial owner whatever the role; a declared beneficial owner at or below it controls otherwise', async () => {
    const managerOwner = await verify({ nif: '599000015', representatives: [{ ...manager, ownership_pct: 60 }] });
    expect(managerOwner.body.outcome).toBe('pass');
    expect(checkOf(managerOwner.body, 'beneficial_owners_identified')).toMatchObject({ result: 'pass', detail: 'Ana Rita Costa (manager, 60 %)' });
    // exactly 25 % is not more than 25 %
    const quarter = await verify({ nif: '599000015', representatives: [{ ...manager, ownership_pct: 25 }] });
    expect(resultOf(quarter.body, 'beneficial_owners_identified')).toBe('review');
    const control = await verify({ nif: '599000015', representatives: [manager, { ...owner, ownership_pct: 10 }] });
    expect(control.body.outcome).toBe('pass');
    expect(checkOf(control.body, 'beneficial_owners_identified').detail).toBe('Pedro Nuno Marques (beneficial_owner, 10 %)');
  });

  test('an organisation among the representatives is screened as one: a listed company as shareholder fails the verification', async () => {
    const r = await verify({ nif: '599000015', representatives: [manager, { name: 'Tanchon Commercial Bank', nif: '500000000', role: 'beneficial_owner', ownership_pct: 60 }] });
    const screened = r.body.checks.find((c: any) => c.check === 'sanctions_screening' && c.subject === 'Tanchon Commercial Bank');
    expect(screened).toMatchObject({ result: 'fail', detail: expect.stringMatching(/^match: un KPe\.003/) });
    expect(r.body.outcome).toBe('fail');
    // by its name alone (no NIF): a company form says it is one
    const byName = await verify({ nif: '599000015', representatives: [manager, { name: 'Tanchon Commercial Bank, S.A.', role: 'shareholder', ownership_pct: 60 }] });
    expect(byName.body.outcome).toBe('fail');
  });

  test('a holding named as one (SGPS, S.A.) without a NIF is no beneficial owner; nor does the senior-managing-official fallback pass beside it', async () => {
    const holding = { name: 'Alfa Holdings SGPS, S.A.', role: 'beneficial_owner', ownership_pct: 100 };
    const r = await verify({ nif: '599000015', representatives: [manager, holding] });
    expect(checkOf(r.body, 'beneficial_owners_identified')).toMatchObject({ result: 'review', detail: expect.stringContaining('Alfa Holdings SGPS, S.A.') });
    expect(r.body.outcome).toBe('review');
    const fallback = await verify({ nif: '599000015', representatives: [manager, holding, { name: 'Rui Sousa', role: 'smo' }] });
    expect(checkOf(fallback.body, 'beneficial_owners_identified')).toMatchObject({ result: 'review', detail: expect.stringContaining('send the natural persons who own or control it') });
  });

  test('a person whose name holds a word like a company form (Sá, Co, Bank) is a person: screened with her birth date, a beneficial owner', async () => {
    for (const name of ['Maria de Sá', 'Nguyen Thi Co', 'Anna Bank', 'Rui Sa']) {
      const r = await verify({ nif: '599000015', representatives: [manager, { name, birth_date: '1970', role: 'beneficial_owner', ownership_pct: 60 }] });
      expect([name, resultOf(r.body, 'beneficial_owners_identified')]).toEqual([name, 'pass']);
    }
  });

  test('feminine Portuguese role words are the same roles (administradora, sócia-gerente)', async () => {
    for (const role of ['Administradora', 'Sócia-Gerente', 'administradora única'])
      expect(resultOf((await verify({ nif: '599000015', representatives: [{ ...manager, role }, owner] })).body, 'legal_representatives_identified')).toBe('pass');
  });

  test("a shareholder given with a company's NIF (a holding) is no beneficial owner: review, naming it and asking for its owners", async () => {
    const r = await verify({ nif: '599000015', representatives: [manager, { name: 'Holding Exemplo, SGPS, S.A.', nif: '599000023', role: 'shareholder', ownership_pct: 80 }] });
    expect(r.body.outcome).toBe('review');
    expect(checkOf(r.body, 'beneficial_owners_identified')).toMatchObject({ result: 'review', detail: expect.stringContaining('Holding Exemplo, SGPS, S.A., NIF 599000023, is not a natural person: send the natural persons who own or control it') });
    // declared a beneficial owner, the same
    const declared = await verify({ nif: '599000015', representatives: [manager, { name: 'Holding Exemplo, SGPS, S.A.', nif: '599000023', role: 'beneficial_owner' }] });
    expect(resultOf(declared.body, 'beneficial_owners_identified')).toBe('review');
  });

  test('no natural person qualifies: the senior managing officials, the law\'s fallback, stated as such (pass, said so)', async () => {
    const r = await verify({ nif: '599000015', representatives: [{ ...manager, role: 'senior_managing_official' }] });
    expect(r.body.outcome).toBe('pass');
    expect(resultOf(r.body, 'legal_representatives_identified')).toBe('pass');
    expect(checkOf(r.body, 'beneficial_owners_identified')).toMatchObject({ result: 'pass', detail: expect.stringContaining('senior managing officials identified instead') });
    // alias of the RCBE's wording
    expect((await verify({ nif: '599000015', representatives: [{ ...manager, role: 'Direção de topo' }] })).body.outcome).toBe('pass');
    // anything else that needs review still does: the fallback never turns a finding into a pass
    const listed = await verify({ nif: '599000015', representatives: [{ name: 'Erik Badeje', role: 'senior_managing_official' }] });
    expect(listed.body.outcome).toBe('review');
  });
});

describe('every problem of a request in one 422, nothing stored', () => {
  test('schema problems and the representatives\' names and birth dates together, each at its path', async () => {
    const t = await h.tenant();
    const r = await verify(
      {
        representatives: [
          { name: 'Dr.', role: 'manager' },
          { name: 'Ana Costa', role: 'beneficial_owner', birth_date: '2199', ownership_pct: 101 },
          { name: 'Rui Santos', role: 5 },
          { name: 'Lda', role: 'director', birth_date: '12/03/1970' },
        ],
        nif_company: '599000015',
      },
      t.api_key,
    );
    const fields = expectError(r, 422, 'validation_failed').fields;
    expect(fields).toEqual([
      { path: 'nif', message: 'is required' },
      { path: 'nif_company', message: 'is not a field of this request (ignored)' },
      { path: 'representatives.1.ownership_pct', message: 'must be at most 100' },
      { path: 'representatives.2.role', message: 'must be a string' },
      { path: 'representatives.3.birth_date', message: expect.stringContaining('must be a calendar date (YYYY-MM-DD) or a year (YYYY)') },
      { path: 'representatives.0.name', message: expect.stringContaining('must contain at least two letters or digits') },
      { path: 'representatives.1.birth_date', message: expect.stringContaining('must not be after today') },
      { path: 'representatives.3.name', message: expect.stringContaining('must contain at least two letters or digits') },
    ]);
    expect(await count(t.tenant_id)).toEqual({ kyc: 0, screenings: 0 });
  });

  test('a service problem alone, a schema problem alone, a wrong ownership_pct, a body that is not an object', async () => {
    const t = await h.tenant();
    const alone = await verify({ nif: '599000015', representatives: [manager, { name: 'S.A.', role: 'beneficial_owner' }] }, t.api_key);
    expect(expectError(alone, 422, 'validation_failed').fields).toEqual([{ path: 'representatives.1.name', message: expect.any(String) }]);
    // an unknown field beside a valid body is ignored, as on every route
    expect((await verify({ nif: '599000015', representatives: [manager, owner], extra: true }, t.api_key)).status).toBe(200);
    for (const [value, message] of [[-1, 'must be at least 0'], ['40', 'must be a number from 0 to 100'], [null, 'must be a number from 0 to 100']] as const) {
      const r = await verify({ nif: '599000015', representatives: [{ ...owner, ownership_pct: value }] }, t.api_key);
      expect(expectError(r, 422, 'validation_failed').fields).toEqual([{ path: 'representatives.0.ownership_pct', message }]);
    }
    // a hostile list: refused on its length (and its first items' problems), not walked whole
    const many = await verify({ nif: '599000015', representatives: Array.from({ length: 20_000 }, () => ({})) }, t.api_key);
    const manyFields = expectError(many, 422, 'validation_failed').fields;
    expect(manyFields[0]).toEqual({ path: 'representatives', message: 'must have at most 20 items' });
    expect(manyFields.length).toBeLessThanOrEqual(257);
    const notObject = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: [1] });
    expect(expectError(notObject, 422, 'validation_failed').fields).toEqual([{ path: '(body)', message: 'must be a JSON object' }]);
    // a wrong check digit is a failed check of the verification, never a 422 (listed or not)
    const digit = await verify({ nif: '599000015', representatives: [{ ...manager, nif: '212345670' }, owner] }, t.api_key);
    expect(digit.status).toBe(200);
    expect(resultOf(digit.body, 'representative_nif_valid')).toBe('fail');
    expect(await count(t.tenant_id)).toEqual({ kyc: 2, screenings: 6 });
  });
});
