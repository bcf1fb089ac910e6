/**
 * POST /v1/kyc/verify (issue 19): the checks and the outcome rule on the sandbox fixtures and the
 * UN list, errors with field paths, storage and reading by id, scope and tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { KycResponse } from '../src/features/kyc/model';
import { loadConfiguredLists } from '../src/features/aml';
import { nifCheckDigit } from '../src/lib/nif';
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
    expect(r.body.checks.map((c: any) => c.check)).toEqual(['nif_valid', 'entity_is_company', 'company_found_active', 'sanctions_screening', 'representative_nif_valid', 'sanctions_screening', 'sanctions_screening', 'legal_events']);
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

  test('live keys without the live tier: 503 live_tier_not_available', async () => {
    const live = await h.tenant({ env: 'live' });
    expectError(await verify({ nif: '599000015', representatives: [] }, live.api_key), 503, 'live_tier_not_available');
  });
});
