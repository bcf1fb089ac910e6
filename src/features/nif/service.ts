import { and, desc, eq, isNotNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import type { UsageMeter } from '../usage/service';
import type { ScoreCaller } from '../score/service';
import { UpstreamError, type LiveAdapters } from '../score/adapters';
import { legalFormOf } from '../../lib/company-form';
import { entityTypeOf } from './entity-types';
import type { NifResponseBody } from './model';
import { REGISTRY_AS_OF, SANDBOX_REGISTRY, UNRECOGNISED_FIXTURE } from './registry';

type Company = NonNullable<NifResponseBody['company']>;

/**
 * holder types that are companies: their record's name in capitals ("EDP SA", as a bureau writes
 * it) states its form; a sole trader's, an inheritance's or a condominium's may be a person's name
 * ("RUI SA" is Rui Sá), whose form is said only by its shape (src/lib/company-form.ts)
 */
const COMPANY_HOLDERS = new Set(['legal_person', 'non_resident_legal_person']);
const formOf = (nif: string, name: string) => legalFormOf(name, { knownCompany: COMPANY_HOLDERS.has(entityTypeOf(nif).code) });

/** What a live record is made of: the bureau's answer (null: the company is unknown to it), and whether the tax authority knows the NIF. */
export interface KnownSources {
  bureau: { name: string; sector: string; insolvent: boolean } | null;
  taxRegistered: boolean;
}

/** GET /v1/nif/{nif}: the validator, the holder type and, for a company, its registry record. */
export class NifService {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly liveAdapters: LiveAdapters | null,
    private readonly roadmapUrl: string,
  ) {}

  /** What the number alone says, before any lookup: its check digit, holder type and validity, and whether a record is looked up for it. */
  judge(caller: Pick<ScoreCaller, 'env'>, nif: string) {
    const checkDigitOk = isValidNif(nif);
    const type = entityTypeOf(nif);
    const unrecognised = caller.env === 'sandbox' && nif === UNRECOGNISED_FIXTURE;
    const valid = checkDigitOk && type.code !== 'unassigned' && !unrecognised;
    // a natural person's number is only validated: no record is looked up or returned; nor for the
    // anonymous final consumer's placeholder, which invoices carry but no one holds
    return { checkDigitOk, type, valid, looksUp: valid && !type.natural_person && type.code !== 'final_consumer' };
  }

  /**
   * `known` (live): what the bureau and the tax authority answered for this NIF earlier in the same
   * request (KYC: for the score it computed); they are not asked again, nor the lookup billed again.
   */
  async lookup(caller: ScoreCaller, nif: string, opts: { bill?: boolean; known?: KnownSources } = {}): Promise<NifResponseBody> {
    const { checkDigitOk, type, valid, looksUp } = this.judge(caller, nif);
    const company = looksUp ? await this.company(caller, nif, opts.known) : null;
    if (opts.bill !== false) this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter: 'nif_lookup' });
    return {
      nif,
      valid,
      check_digit_ok: checkDigitOk,
      entity_type: { code: type.code, label_en: type.label_en, label_pt: type.label_pt },
      vat_number: valid ? `PT${nif}` : null, // no VAT number can be made of a NIF that is not one
      company,
      synthetic: caller.env === 'sandbox',
    };
  }

  private async company(caller: ScoreCaller, nif: string, known?: KnownSources): Promise<Company | null> {
    if (caller.env === 'sandbox') {
      const fixture = SANDBOX_REGISTRY[nif];
      if (fixture) return { ...fixture, legal_form: formOf(nif, fixture.name), source: 'sandbox_registry', as_of: REGISTRY_AS_OF };
      return this.fromBooks(caller, nif);
    }
    if (!this.liveAdapters)
      throw new ApiError('live_tier_not_available', 'Live company records are not available yet for this deployment (the registry adapters are not configured). Test against the sandbox meanwhile.', {
        body: { roadmap_url: this.roadmapUrl },
      });
    let found: KnownSources;
    if (known) found = known;
    else
      try {
        const [bureau, tax] = await Promise.all([this.liveAdapters.bureau(nif), this.liveAdapters.taxAuthority(nif)]);
        if (bureau) this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter: 'bureau_passthrough', costCents: bureau.cost_cents });
        found = { bureau: bureau && { name: bureau.name, sector: bureau.sector, insolvent: bureau.events?.insolvency_proceedings === true }, taxRegistered: tax !== null };
      } catch (err) {
        if (err instanceof UpstreamError)
          throw new ApiError('upstream_unavailable', `A data source is unavailable (${err.source}); nothing was billed. Retry later.`, { headers: { 'retry-after': '30' } });
        throw err;
      }
    const { bureau } = found;
    if (!bureau) return this.fromBooks(caller, nif);
    return {
      name: bureau.name,
      legal_form: formOf(nif, bureau.name),
      address: null,
      cae: null,
      nace: bureau.sector ? { section: bureau.sector, division: null } : null,
      status: bureau.insolvent ? 'insolvent' : found.taxRegistered ? 'active' : 'ceased',
      incorporation_date: null,
      source: 'credit_bureau',
      as_of: new Date().toISOString().slice(0, 10),
    };
  }

  /** a company the tenant's synced ERP books name as a customer (sandbox: the demo books) */
  private async fromBooks(caller: ScoreCaller, nif: string): Promise<Company | null> {
    const inv = this.database.t.invoices;
    const [row] = await this.database.db
      .select({ name: inv.customerName, provider: inv.provider, syncedAt: inv.syncedAt })
      .from(inv)
      .where(and(eq(inv.tenantId, caller.tenantId), eq(inv.env, caller.env), eq(inv.customerNif, nif), isNotNull(inv.customerName)))
      .orderBy(desc(inv.syncedAt))
      .limit(1);
    if (!row?.name) return null;
    return {
      name: row.name,
      legal_form: formOf(nif, row.name),
      address: null,
      cae: null,
      nace: null,
      status: null, // an invoice in the tenant's books confirms no registration nor activity
      incorporation_date: null,
      source: `erp:${row.provider}`,
      as_of: row.syncedAt.toISOString(),
    };
  }
}
