import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import { isCompanyName } from '../../lib/company-form';
import type { UsageMeter } from '../usage/service';
import type { ScoreCaller, ScoreService } from '../score/service';
import type { AmlService } from '../aml/service';
import type { KnownSources, NifService } from '../nif/service';
import { entityTypeOf } from '../nif/entity-types';
import type { KycResponseBody } from './model';
import { LEGAL_REPRESENTATIVE_ROLES, OWNERSHIP_THRESHOLD_PCT, roleOf } from './roles';

type Check = KycResponseBody['checks'][number];

/** the holder types a company can have (a natural person or an unassigned prefix cannot be onboarded as one) */
const COMPANY_TYPES = new Set(['legal_person', 'public_administration', 'non_resident_legal_person', 'investment_fund', 'sole_trader', 'condominium_or_irregular', 'civil_partnership']);

export interface KycBody {
  nif: string;
  representatives: { name: string; birth_date?: string; nif?: string; nationality?: string; role: string; ownership_pct?: number }[];
  customer_reference?: string;
}

/**
 * POST /v1/kyc/verify: the checks of an onboarding, each with its result, and an outcome by a
 * documented rule (docs/kyc.md): fail if any check fails, else review if any needs review or could
 * not be made, else pass.
 */
export class KycService {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly nif: NifService,
    private readonly aml: AmlService,
    private readonly scores: ScoreService,
    private readonly now: () => Date,
  ) {}

  /** Its usage (kyc_verify, and the bureau lookup made for it, live) is recorded only if it succeeds (UsageMeter.hold). */
  async verify(caller: ScoreCaller, body: KycBody): Promise<{ body: KycResponseBody; text: string }> {
    // every name was checked before anything is stored (a screening is a record of its own), with
    // the request's other problems, by the route (kycRequestProblems)
    const checks: Check[] = [];
    const add = (check: string, subject: string | null, result: Check['result'], detail: string) => checks.push({ check, subject, result, detail });
    const judged = this.nif.judge(caller, body.nif);
    const isCompany = COMPANY_TYPES.has(judged.type.code);

    // insolvency and other legal events, from the scoring data, then the registry record: both
    // looked up before anything is stored, so a data source failing leaves no screening behind. The
    // score first: when it is computed now (live), the bureau and the tax authority have just
    // answered for this NIF, and the record is made of their answers rather than asked (and billed)
    // again; a score read from the cache leaves the record to its own lookup, as before.
    const mk = (check: string, subject: string | null, result: Check['result'], detail: string): Check => ({ check, subject, result, detail });
    let legalCheck: Check;
    let known: KnownSources | undefined;
    if (!judged.valid || !isCompany) legalCheck = mk('legal_events', body.nif, 'not_available', 'not a valid company NIF');
    else {
      try {
        const { result, facts, computed } = await this.scores.scoreWithFacts(caller, body.nif);
        // a live score computed now has just asked the bureau and the tax authority (a cached one has not)
        if (caller.env === 'live' && computed)
          known = { bureau: { name: facts.name, sector: facts.sector, insolvent: facts.events?.insolvency === true }, taxRegistered: result.data_sources.includes('tax_authority') };
        const ev = facts.events;
        // no bureau events nor credit register for it: nothing to say "none on record" of
        if (!ev) legalCheck = mk('legal_events', body.nif, facts.adverse ? 'review' : 'not_available', facts.adverse ? 'adverse events on record' : 'no insolvency, default or litigation records for this company');
        else if (ev.insolvency) legalCheck = mk('legal_events', body.nif, 'fail', 'insolvency proceedings');
        else if (ev.restructuring || ev.recent_default || ev.written_off_or_litigation)
          legalCheck = mk('legal_events', body.nif, 'review', [ev.restructuring && 'restructuring proceedings (PER/RERE)', ev.recent_default && 'a default in the last 12 months', ev.written_off_or_litigation && 'credit written off or in litigation'].filter(Boolean).join('; '));
        else legalCheck = mk('legal_events', body.nif, 'pass', 'no insolvency, restructuring, default or litigation on record');
      } catch (err) {
        if (!(err instanceof ApiError) || !['company_not_found', 'invalid_nif'].includes(err.code)) throw err;
        legalCheck = mk('legal_events', body.nif, 'not_available', err.code === 'company_not_found' ? 'no scoring data for this company' : 'not recognised by the tax authority');
        // live, not found is the bureau's answer just given: no record there to ask for again
        if (caller.env === 'live' && err.code === 'company_not_found') known = { bureau: null, taxRegistered: false };
      }
    }
    const company = await this.nif.lookup(caller, body.nif, { bill: false, known });

    add('nif_valid', body.nif, company.valid ? 'pass' : 'fail', company.valid ? 'check digit and prefix valid' : company.check_digit_ok ? 'the number is not recognised' : 'the check digit is wrong');
    add('entity_is_company', body.nif, isCompany ? 'pass' : 'fail', `holder type: ${company.entity_type.label_en}`);
    if (!company.company) add('company_found_active', body.nif, company.valid && isCompany ? 'review' : 'fail', 'no registry record for this NIF');
    else if (company.company.status === null) add('company_found_active', body.nif, 'review', `${company.company.name}: known only from ${company.company.source} (the tenant's books), not from a registry: registration and activity not confirmed`);
    else add('company_found_active', body.nif, company.company.status === 'active' ? 'pass' : 'fail', `${company.company.name}: ${company.company.status} (source ${company.company.source})`);

    const screenings: KycResponseBody['screenings'] = [];
    const screenOne = async (subject: string, q: Parameters<AmlService['screen']>[1], path: string) => {
      const s = await this.aml.screen(caller, { ...q, customer_reference: body.customer_reference }, { bill: false, fieldPath: path });
      screenings.push({ subject, screening_id: s.body.screening_id, status: s.body.status });
      const top = s.body.matches[0];
      add('sanctions_screening', subject, s.body.status === 'match' ? 'fail' : s.body.status === 'potential_match' ? 'review' : 'pass', top ? `${s.body.status}: ${top.list} ${top.entry_id} "${top.matched_name}" (score ${top.score})` : 'no match on ' + s.body.lists.map((l) => l.name).join(', '));
    };
    if (company.company) await screenOne(company.company.name, { name: company.company.name, type: 'organisation', country: 'PT' }, 'nif');
    else add('sanctions_screening', body.nif, 'not_available', 'no company name to screen');

    checks.push(...whoIsIdentified(body));

    for (const [i, r] of body.representatives.entries()) {
      if (r.nif !== undefined) {
        // as GET /v1/nif judges a number: the check digit and an assigned prefix; the anonymous
        // final consumer's placeholder is no one's number
        const type = entityTypeOf(r.nif);
        // the detail names the NIF given: the verification's record of it (a data-subject request finds it by it)
        if (!isValidNif(r.nif)) add('representative_nif_valid', r.name, 'fail', `NIF ${r.nif}: the check digit is wrong`);
        else if (type.code === 'unassigned' || type.code === 'final_consumer') add('representative_nif_valid', r.name, 'fail', `NIF ${r.nif}: not a holder's number: ${type.label_en}`);
        else add('representative_nif_valid', r.name, type.natural_person ? 'pass' : 'review', `NIF ${r.nif}: holder type: ${type.label_en}`);
      }
      // an organisation declared among them (a corporate shareholder or director) is screened as one:
      // as a person its exact listed name lost the type's weight and stayed a potential match
      // (by its name alone: screened as either, with what was given; by its NIF: as an organisation)
      if (isOrganisation(r)) await screenOne(r.name, { name: r.name, type: r.nif !== undefined && isValidNif(r.nif) ? 'organisation' : 'any', ...(r.nationality ? { country: r.nationality } : {}) }, `representatives.${i}.name`);
      else await screenOne(r.name, { name: r.name, type: 'person', birth_date: r.birth_date, nationality: r.nationality }, `representatives.${i}.name`);
    }

    checks.push(legalCheck);
    const outcome = checks.some((c) => c.result === 'fail') ? 'fail' : checks.some((c) => c.result === 'review' || c.result === 'not_available') ? 'review' : 'pass';
    const completedAt = this.now();
    const id = `kyc_${Bun.randomUUIDv7()}`;
    const response: KycResponseBody = {
      verification_id: id,
      outcome,
      checks,
      company,
      screenings,
      completed_at: completedAt.toISOString(),
      synthetic: caller.env === 'sandbox',
      ...(body.customer_reference !== undefined ? { customer_reference: body.customer_reference } : {}),
    };
    const text = JSON.stringify(response);
    await this.database.withTx((tx) =>
      this.database.insertMany(tx, this.database.t.kycVerifications, [{ id, tenantId: caller.tenantId, env: caller.env, nif: body.nif, outcome, customerReference: body.customer_reference ?? null, response: text, createdAt: completedAt }]),
    );
    this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter: 'kyc_verify' });
    return { body: response, text };
  }

  async get(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, id: string) {
    const k = this.database.t.kycVerifications;
    const [row] = await this.database.db.select({ response: k.response }).from(k).where(and(eq(k.tenantId, caller.tenantId), eq(k.env, caller.env), eq(k.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No verification ${id} for this tenant in this environment.`);
    return JSON.parse(row.response) as KycResponseBody;
  }
}

const pct = (n: number) => `${Number(n.toFixed(2))} %`;
const named = (r: KycBody['representatives'][number], role: string | null) => `${r.name} (${[role ?? r.role, r.ownership_pct !== undefined ? pct(r.ownership_pct) : null].filter(Boolean).join(', ')})`;

/**
 * Whether the company's legal representatives and beneficial owners were identified (Lei n.º
 * 83/2017, customer due diligence; the RCBE, Lei n.º 89/2017): the API cannot find them, the caller
 * declares them, and a verification that declares none cannot pass (review, saying what to send).
 * A beneficial owner is a representative with role beneficial_owner, or anyone holding more than
 * 25 %; when no natural person qualifies, the law's fallback is the senior managing officials, which
 * the caller states with role senior_managing_official (docs/kyc.md).
 */
/**
 * A representative that is an organisation, not a natural person: by its NIF when given (a valid one
 * whose holder type is not a natural person's), else by its name as written: a company form ending
 * it ("Alfa Holdings SGPS, S.A.", "Beta, Lda") or a word only a company's name holds (SGPS,
 * Sociedade, Cooperativa); a surname such as Sá, or a word like Bank, says nothing
 * (src/lib/company-form.ts).
 */
export function isOrganisation(r: { name: string; nif?: string }): boolean {
  if (r.nif !== undefined && isValidNif(r.nif)) return !entityTypeOf(r.nif).natural_person;
  return isCompanyName(r.name);
}

export function whoIsIdentified(body: KycBody): Check[] {
  const reps = body.representatives.map((r) => ({ r, role: roleOf(r.role) }));
  const mk = (check: string, result: Check['result'], detail: string): Check => ({ check, subject: body.nif, result, detail });
  const legal = reps.filter((x) => x.role !== null && LEGAL_REPRESENTATIVE_ROLES.has(x.role));
  const others = [...new Set(reps.filter((x) => x.role === null).map((x) => JSON.stringify(x.r.role)))];
  const legalCheck = legal.length
    ? mk('legal_representatives_identified', 'pass', legal.map((x) => named(x.r, x.role)).join('; '))
    : mk(
        'legal_representatives_identified',
        'review',
        `${reps.length ? `no legal representative among the representatives${others.length ? ` (roles not recognised: ${others.join(', ')})` : ''}` : 'no representatives given'}: send who may bind the company, with role manager (gerente), director (administrador) or legal_representative`,
      );
  // a beneficial owner is a natural person: a shareholder given with a company's NIF or name (a
  // holding) is not one (its own owners are, through it)
  const natural = (x: (typeof reps)[number]) => !isOrganisation(x.r);
  const owners = reps.filter((x) => natural(x) && (x.role === 'beneficial_owner' || (x.r.ownership_pct ?? 0) > OWNERSHIP_THRESHOLD_PCT));
  const holdings = reps.filter((x) => !natural(x) && (x.role === 'beneficial_owner' || (x.r.ownership_pct ?? 0) > OWNERSHIP_THRESHOLD_PCT));
  const officials = reps.filter((x) => x.role === 'senior_managing_official');
  const ownersCheck = owners.length
    ? mk('beneficial_owners_identified', 'pass', owners.map((x) => named(x.r, x.role)).join('; '))
    : // the law's fallback only when no natural person qualifies: a declared corporate owner has some behind it
      officials.length && !holdings.length
      ? mk(
          'beneficial_owners_identified',
          'pass',
          `no natural person declared as holding more than 25 % or controlling the company: its senior managing officials identified instead, the law's fallback (Lei n.º 83/2017): ${officials.map((x) => named(x.r, x.role)).join('; ')}; keep on file why no one qualifies (and the RCBE declaration)`,
        )
      : mk(
          'beneficial_owners_identified',
          'review',
          `no beneficial owner identified${holdings.length ? ` (${holdings.map((x) => `${x.r.name}${x.r.nif ? `, NIF ${x.r.nif},` : ''} is not a natural person: send the natural persons who own or control it`).join('; ')})` : ''}: send each natural person holding more than 25 % of the company, directly or indirectly, or controlling it otherwise, with role beneficial_owner (and ownership_pct); if none qualifies, its senior managing officials with role senior_managing_official (Lei n.º 83/2017; RCBE, Lei n.º 89/2017)`,
        );
  return [legalCheck, ownersCheck];
}
