import { and, desc, eq, gte, inArray, isNotNull, sql, type SQLWrapper } from 'drizzle-orm';
import type { Database } from '../../db/client';
import type { Env } from '../tenants/service';
import { parseSyncCursor } from './util';
import { buyerBehaviour, sellerBooks, type BuyerBehaviour, type ObservedDocument, type SellerBooks, type SellerDocument } from './observations';
import { RECEIVABLE_DOCUMENT_TYPES } from './document-types';
/** constant text (no parameters: the statement stays one prepared text) */
const RECEIVABLE_TYPES_SQL = sql.raw(RECEIVABLE_DOCUMENT_TYPES.map((t) => `'${t}'`).join(', '));

/** the most recent documents read per company (older ones add little to behaviour) */
const MAX_DOCUMENTS = 2000;
const IN_CHUNK = 500;

export interface ErpObservations {
  /** the provider whose books were used (the one holding most of the documents) */
  provider: string;
  /** when the newest of those documents was synced */
  synced_at: string;
  buyer: BuyerBehaviour | null;
  seller: SellerBooks | null;
}

type DocRow = { provider: string; customerReference: string; number: string; issueDate: string; dueDate: string | null; grossTotalCents: number; netTotalCents: number; documentType: string; customerNif: string | null; syncedAt: Date };

/** Payments matched to the documents, by provider|customer_reference|number. */
async function matchedPayments(database: Database, tenantId: string, env: Env, rows: DocRow[]) {
  const b = database.t.bankTransactions;
  const byDoc = new Map<string, { date: string; amount_cents: number }[]>();
  const numbers = [...new Set(rows.map((r) => r.number))];
  for (let i = 0; i < numbers.length; i += IN_CHUNK) {
    const found = await database.db
      .select({ provider: b.provider, ref: b.customerReference, number: b.matchedInvoiceNumber, date: b.bookingDate, amount: b.amountCents })
      .from(b)
      .where(and(eq(b.tenantId, tenantId), eq(b.env, env), inArray(b.matchedInvoiceNumber, numbers.slice(i, i + IN_CHUNK))));
    for (const p of found) {
      if (p.amount <= 0 || !p.number) continue;
      const key = `${p.provider}|${p.ref}|${p.number}`;
      const list = byDoc.get(key) ?? [];
      list.push({ date: p.date, amount_cents: Number(p.amount) });
      byDoc.set(key, list);
    }
  }
  return (r: DocRow) => byDoc.get(`${r.provider}|${r.customerReference}|${r.number}`) ?? [];
}

const toDoc = (r: DocRow, payments: { date: string; amount_cents: number }[], paymentsKnownUntil: string | null = null): ObservedDocument => ({
  issue_date: r.issueDate,
  due_date: r.dueDate,
  gross_cents: Number(r.grossTotalCents),
  payments,
  payments_known_until: paymentsKnownUntil,
});

/** books read for their bank data's reach, at most (documents of other books are judged as of today) */
const MAX_BOOKS = 20;

/**
 * How far each book's bank data reaches (YYYY-MM-DD), by provider|customer_reference: the
 * high-water mark of the transactions' last-modified times in its last succeeded sync. Books with
 * no transactions synced (a provider without bank data) are absent, whatever their cursor says:
 * their documents are judged as of today.
 */
async function bankDataReach(database: Database, tenantId: string, env: Env, rows: DocRow[]) {
  const books = [...new Map(rows.map((x) => [`${x.provider}|${x.customerReference}`, x])).values()].slice(0, MAX_BOOKS);
  const { reach: query } = preparedReads(database);
  const found = await Promise.all(books.map((b) => query.execute({ tenantId, env, provider: b.provider, ref: b.customerReference })));
  const reach = new Map<string, string>();
  books.forEach((book, i) => {
    const last = found[i]![0];
    const at = last && Boolean(last.hasBank) ? parseSyncCursor(last.cursor)?.transactions?.updated_at : undefined;
    if (at) reach.set(`${book.provider}|${book.customerReference}`, at.slice(0, 10));
  });
  return (x: DocRow) => reach.get(`${x.provider}|${x.customerReference}`) ?? null;
}

function mostCommonProvider(rows: DocRow[]) {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.provider, (counts.get(r.provider) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
}

/**
 * The tenant's synced books about `nif` in this environment: how it pays when it is a customer in
 * them, and its own books when it is a connected company (connections initiated with company_nif).
 * Null when they hold nothing about it.
 */
/**
 * The two reads every score makes, prepared once per database: Drizzle's query building costs more
 * than these indexed reads themselves (about 200 µs a score when built each time, measured).
 */
type Prepared<R> = { execute(p: Record<string, string>): Promise<R[]> };
const prepared = new WeakMap<Database, { asBuyer: Prepared<DocRow>; own: Prepared<{ provider: string; ref: string }>; reach: Prepared<{ cursor: string | null; hasBank: unknown }> }>();
function preparedReads(database: Database) {
  let p = prepared.get(database);
  if (!p) {
    const inv = database.t.invoices;
    const c = database.t.erpConnections;
    const r = database.t.syncRuns;
    const b = database.t.bankTransactions;
    p = {
      asBuyer: database.db
        .select(docColumns(database))
        .from(inv)
        .where(and(eq(inv.tenantId, sql.placeholder('tenantId')), eq(inv.env, sql.placeholder('env')), eq(inv.customerNif, sql.placeholder('nif')), eq(inv.status, 'N'), inArray(inv.documentType, [...RECEIVABLE_DOCUMENT_TYPES])))
        .orderBy(desc(inv.issueDate))
        .limit(MAX_DOCUMENTS)
        .prepare('erp_observations_as_buyer') as never,
      own: database.db
        .select({ provider: c.provider, ref: c.customerReference })
        .from(c)
        .where(and(eq(c.tenantId, sql.placeholder('tenantId')), eq(c.env, sql.placeholder('env')), eq(c.companyNif, sql.placeholder('nif')), eq(c.status, 'active')))
        .prepare('erp_observations_own') as never,
      // a book's last succeeded sync (its cursor) and whether it holds bank transactions (bankDataReach)
      reach: database.db
        .select({
          cursor: r.cursor,
          hasBank: sql<unknown>`exists (select 1 from ${b} where ${b.tenantId} = ${sql.placeholder('tenantId')} and ${b.env} = ${sql.placeholder('env')} and ${b.provider} = ${sql.placeholder('provider')} and ${b.customerReference} = ${sql.placeholder('ref')})`,
        })
        .from(r)
        .where(and(eq(r.tenantId, sql.placeholder('tenantId')), eq(r.env, sql.placeholder('env')), eq(r.provider, sql.placeholder('provider')), eq(r.customerReference, sql.placeholder('ref')), eq(r.status, 'succeeded'), isNotNull(r.cursor)))
        .orderBy(desc(r.createdAt), desc(r.id)) // ids are UUIDv7: the later of two runs created in the same millisecond
        .limit(1)
        .prepare('erp_bank_reach') as never,
    };
    prepared.set(database, p);
  }
  return p;
}
const docColumns = (database: Database) => {
  const inv = database.t.invoices;
  return {
    provider: inv.provider, customerReference: inv.customerReference, number: inv.number, issueDate: inv.issueDate, dueDate: inv.dueDate,
    grossTotalCents: inv.grossTotalCents, netTotalCents: inv.netTotalCents, documentType: inv.documentType, customerNif: inv.customerNif, syncedAt: inv.syncedAt,
  };
};

/**
 * Whether the two reads below would find anything, as SQL for a caller that asks in a query of its
 * own (a score asks in one round trip with its other reads; most tenants' books do not name the
 * company scored): `asBuyer`, documents naming it as customer; `own`, an active connection of its
 * own books. `key` names the tenant, environment and NIF: placeholders, or a batch's columns.
 */
export function erpPresence(database: Database, key: { tenantId: SQLWrapper; env: SQLWrapper; nif: SQLWrapper }) {
  const inv = database.t.invoices;
  const c = database.t.erpConnections;
  return {
    asBuyer: sql<boolean>`exists (select 1 from ${inv} where ${inv.tenantId} = ${key.tenantId} and ${inv.env} = ${key.env} and ${inv.customerNif} = ${key.nif} and ${inv.status} = 'N' and ${inv.documentType} in (${RECEIVABLE_TYPES_SQL}))`,
    own: sql<boolean>`exists (select 1 from ${c} where ${c.tenantId} = ${key.tenantId} and ${c.env} = ${key.env} and ${c.companyNif} = ${key.nif} and ${c.status} = 'active')`,
  };
}

/** `present`: what erpPresence found (the reads of what is not there are skipped). */
export async function loadErpObservations(database: Database, tenantId: string, env: Env, nif: string, asOf: Date, present: { asBuyer: boolean; own: boolean }): Promise<ErpObservations | null> {
  if (!present.asBuyer && !present.own) return null;
  const inv = database.t.invoices;
  const cols = docColumns(database);
  const today = asOf.toISOString().slice(0, 10);
  const reads = preparedReads(database);
  const params = { tenantId, env, nif };
  const asBuyer = !present.asBuyer ? [] : (await reads.asBuyer.execute(params)).map((r) => ({ ...r, syncedAt: r.syncedAt instanceof Date ? r.syncedAt : new Date(r.syncedAt) })) as DocRow[];
  const own = !present.own ? [] : await reads.own.execute(params);
  let asSeller: DocRow[] = [];
  if (own.length) {
    const since = new Date(asOf.getTime() - 730 * 86_400_000).toISOString().slice(0, 10);
    for (const o of own)
      asSeller.push(
        ...((await database.db
          .select(cols)
          .from(inv)
          .where(and(eq(inv.tenantId, tenantId), eq(inv.env, env), eq(inv.provider, o.provider), eq(inv.customerReference, o.ref), eq(inv.status, 'N'), gte(inv.issueDate, since)))
          .orderBy(desc(inv.issueDate))
          .limit(MAX_DOCUMENTS * 5)) as DocRow[]),
      );
  }
  if (!asBuyer.length && !asSeller.length) return null;

  const paymentsOf = await matchedPayments(database, tenantId, env, [...asBuyer, ...asSeller]);
  const reachOf = asBuyer.length ? await bankDataReach(database, tenantId, env, asBuyer) : () => null;
  const buyer = asBuyer.length ? buyerBehaviour(asBuyer.map((r) => toDoc(r, paymentsOf(r), reachOf(r))), today) : null;
  const seller = asSeller.length
    ? sellerBooks(
        asSeller.map((r): SellerDocument => ({ ...toDoc(r, paymentsOf(r)), customer_nif: r.customerNif, net_cents: Number(r.netTotalCents), credit: r.documentType === 'NC' })),
        today,
      )
    : null;
  const used = [...asBuyer, ...asSeller];
  const syncedAt = new Date(Math.max(...used.map((r) => r.syncedAt.getTime())));
  return { provider: mostCommonProvider(used), synced_at: syncedAt.toISOString(), buyer, seller };
}
