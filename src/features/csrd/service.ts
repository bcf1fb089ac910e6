import { and, desc, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import type { UsageMeter } from '../usage/service';
import { sectorWeights, type EsgResult, type RecommendationRef } from '../esg/engine';
import { recommendationsOf } from '../esg/service';
import type { AnswerValue } from '../esg/questionnaire';
import { indicatorRows, mapDisclosures, refusedOmissions, sdgLinks, type CompanyDetails, type ReportLanguage } from './mapping';
import type { CsrdReportBody, CsrdReportInput } from './model';
import { renderReportPdf } from './pdf';

export interface CsrdCaller {
  tenantId: string;
  env: 'sandbox' | 'live';
  keyId: string;
  requestId: string;
}

type StoredResult = Omit<EsgResult, 'recommendations'> & { recommendations: (EsgResult['recommendations'][number] | RecommendationRef)[]; algorithm_version?: string; computed_at?: string; synthetic?: boolean };

const sha256Hex = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex');

/** Builds VSME reports from stored ESG assessments, stores them (JSON and PDF) and serves them again. */
export class CsrdService {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
  ) {}

  private async assessment(caller: CsrdCaller, body: CsrdReportInput) {
    const { db, t } = this.database;
    const e = t.esgAssessments;
    const scope = and(eq(e.tenantId, caller.tenantId), eq(e.env, caller.env));
    if (body.assessment_id !== undefined) {
      const [row] = await db.select().from(e).where(and(scope, eq(e.id, body.assessment_id.toLowerCase()))).limit(1);
      if (!row) throw new ApiError('resource_not_found', `No ESG assessment ${body.assessment_id} in this tenant and environment.`);
      return row;
    }
    const [row] = await db.select().from(e).where(and(scope, eq(e.nif, body.nif!))).orderBy(desc(e.computedAt)).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No ESG assessment of NIF ${body.nif} in this tenant and environment: assess it first with POST /v1/esg, then ask for the report.`);
    return row;
  }

  /** The report as JSON and PDF, stored and metered. */
  async create(caller: CsrdCaller, body: CsrdReportInput, language: ReportLanguage): Promise<{ report: CsrdReportBody; pdf: Uint8Array }> {
    const row = await this.assessment(caller, body);
    const answers = row.answers as Record<string, AnswerValue>;
    const stored = row.result as unknown as StoredResult;
    const company: CompanyDetails = { ...(body.company ?? {}) };
    if (company.country) company.country = company.country.toUpperCase(); // ISO 3166-1 as printed: "pt" is PT
    const year = row.computedAt.getUTCFullYear();
    const period = body.reporting_period ?? { start: `${year}-01-01`, end: `${year}-12-31` };
    // recommendations in the report's language (esg/service.ts recommendationsOf)
    const lang = language === 'pt-PT' ? 'pt' : 'en';
    const recommendations = recommendationsOf(row, lang);
    const id = `rep_${crypto.randomUUID()}`;
    const createdAt = this.now();
    const mapped = mapDisclosures({ sector: row.sector, answers, company, language });
    const report: CsrdReportBody = {
      report_id: id,
      assessment_id: row.id,
      nif: row.nif,
      language,
      reporting_period: period,
      sector: row.sector,
      company,
      scores: {
        overall: stored.overall,
        environmental: stored.environmental,
        social: stored.social,
        governance: stored.governance,
        tier: stored.tier,
        // what the report discloses: a "not applicable" its headcount refuses is not disclosed
        vsme_alignment: Math.max(0, stored.vsme_alignment - refusedOmissions(answers, company).length),
        weights: sectorWeights(row.sector),
        algorithm_version: row.algorithmVersion,
        assessed_at: row.computedAt.toISOString(),
      },
      disclosures: mapped.disclosures,
      comprehensive_disclosures: mapped.comprehensive_disclosures,
      indicators: indicatorRows(answers, language, company),
      recommendations: recommendations.map((r) => ({ ...r, sdgs: [...r.sdgs] })),
      sdgs: sdgLinks(answers, stored.aligned_sdgs ?? [], language),
      sha256: '',
      pdf_url: `/v1/csrd/reports/${id}/pdf`,
      synthetic: caller.env === 'sandbox',
      created_at: createdAt.toISOString(),
    };
    const pdf = await renderReportPdf(report);
    report.sha256 = sha256Hex(pdf);
    const { withTx, t } = this.database;
    await withTx((tx) =>
      this.database.insertMany(tx, t.csrdReports, [
        {
          id,
          tenantId: caller.tenantId,
          env: caller.env,
          assessmentId: row.id,
          nif: row.nif,
          language,
          sha256: report.sha256,
          pdf: Buffer.from(pdf).toString('base64'),
          data: report as unknown as Record<string, unknown>,
          createdAt,
        },
      ]),
    );
    this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, meter: 'csrd_report', requestId: caller.requestId });
    return { report, pdf };
  }

  /** A stored report of the caller's tenant and environment (404 otherwise). */
  async get(caller: Pick<CsrdCaller, 'tenantId' | 'env'>, id: string, withPdf: boolean): Promise<{ report: CsrdReportBody; pdf: Uint8Array | null }> {
    const { db, t } = this.database;
    const r = t.csrdReports;
    const where = and(eq(r.id, id), eq(r.tenantId, caller.tenantId), eq(r.env, caller.env));
    const [row] = withPdf
      ? await db.select({ data: r.data, pdf: r.pdf }).from(r).where(where).limit(1)
      : await db.select({ data: r.data, pdf: sql<null>`null` }).from(r).where(where).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No CSRD report ${id} in this tenant and environment.`);
    const pdf = typeof row.pdf === 'string' ? new Uint8Array(Buffer.from(row.pdf, 'base64')) : null;
    return { report: row.data as unknown as CsrdReportBody, pdf };
  }
}
