import type { Env } from '../tenants/service';

/** Who acts on receivables-finance records: an API key's request, or the service's own sweep (keyId and requestId null). */
export interface FinanceCaller {
  tenantId: string;
  env: Env;
  keyId: string | null;
  requestId: string | null;
  scoreGeneration?: number;
}
