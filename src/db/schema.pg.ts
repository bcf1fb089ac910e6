// drizzle-kit entry for PostgreSQL migrations (db/pg)
import { pgKit } from './kit';
import { defineSchema } from './schema';
export const {
  tenants, apiKeys, auditLog, usageRecords, idempotencyKeys, scoreResults, esgAssessments, erpConnections,
  syncRuns, invoices, bankTransactions, webhookEndpoints, events, webhookDeliveries, creditDecisions, creditPolicies, amlListVersions, amlEntries, amlScreenings, kycVerifications, saftRuns, saftChunks,
  financeOperations, assignedInvoices, confirmingProgrammes, confirmingSuppliers, confirmingPayables, auditEntries, cessionNotices, insuranceSubmissions, gdprRequests, csrdReports, oauthClients, oauthSigningKeys, appMeta,
} = defineSchema(pgKit);
