import { and, eq, inArray, isNotNull, sql, sum } from 'drizzle-orm';
import type { Database, Db } from '../../db/client';
import { holdsInvoices, type OperationStatus } from '../factoring/states';

/**
 * What the tenant has committed to one company, in cents, across receivables finance: the
 * company's invoices held by factoring operations (as debtor: live, funded or defaulted) and the
 * limits of its active confirming programmes (as anchor). A company's credit decision gives one
 * limit; each product's check counts the others', so three programmes or a programme and an
 * operation cannot each fit it alone.
 */
export async function committedTo(database: Database, scope: { tenantId: string; env: string }, nif: string, db: Db = database.db): Promise<{ factoring_cents: number; confirming_cents: number }> {
  const { t } = database;
  const a = t.assignedInvoices;
  const holders = await db
    .selectDistinct({ id: a.holderId })
    .from(a)
    .where(and(eq(a.tenantId, scope.tenantId), eq(a.env, scope.env), eq(a.debtorNif, nif), isNotNull(a.assignmentKey)));
  const ids = holders.map((h) => h.id).filter((id) => id.startsWith('fop_'));
  let factoring = 0;
  if (ids.length) {
    const o = t.financeOperations;
    for (const r of await db.select({ status: o.status, data: o.data }).from(o).where(inArray(o.id, ids))) {
      if (!holdsInvoices(r.status as OperationStatus)) continue;
      for (const d of (r.data as { debtors: { nif: string; face_cents: number }[] }).debtors) if (d.nif === nif) factoring += d.face_cents;
    }
  }
  const p = t.confirmingProgrammes;
  const [programmes] = await db
    .select({ total: sum(p.limitCents) })
    .from(p)
    .where(and(eq(p.tenantId, scope.tenantId), eq(p.env, scope.env), eq(p.anchorNif, nif), eq(p.status, 'active')));
  return { factoring_cents: factoring, confirming_cents: Number(programmes?.total ?? 0) };
}

/**
 * Inside a transaction that checks a company's exposure and then commits to it (a factoring
 * operation, a confirming programme): the companies' exposure is this transaction's until it ends,
 * so a concurrent check waits for its commit and counts it. Without it, 30 operations sent at once
 * each saw nothing committed and were all approved against one limit. SQLite: every write
 * transaction already holds the database's one write lock from its BEGIN IMMEDIATE; PostgreSQL: a
 * transaction-scoped advisory lock per tenant, environment and company, taken in NIF order (no deadlock).
 */
export async function lockExposure(database: Database, tx: Db, scope: { tenantId: string; env: string }, nifs: Iterable<string>) {
  if (database.dialect !== 'postgres') return;
  for (const nif of [...new Set(nifs)].sort()) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`exposure:${scope.tenantId}:${scope.env}:${nif}`}, 0))`);
}
