/**
 * Reconciliation speed (not a test): the demo ERP generator's books at about 10 k invoices and
 * 10 k bank transactions, reconciled in process; also the match quality against the generator's
 * own ground truth.   bun run bench/reconcile.ts
 */
import { cpus } from 'node:os';
import { demoInvoices, demoTransactions } from '../src/features/erp/demo-data';
import { reconcile } from '../src/features/reconcile/engine';

const opts = { seed: 'bench-reconcile', invoices: 12_200, startDate: '2025-11-01' };
const invoices = [...demoInvoices(opts)].filter((i) => i.status === 'N' && ['FT', 'FR', 'FS', 'ND'].includes(i.document_type));
const txns = [...demoTransactions(opts)];
const input = {
  t: txns.map((t) => ({ id: t.provider_transaction_id, date: t.booking_date, amount_cents: t.amount_cents, description: t.description, counterparty: t.counterparty_name })),
  i: invoices.map((i) => ({ id: i.provider_document_id, number: i.number, atcud: i.atcud, customer_nif: i.customer_nif, customer_name: i.customer_name, issue_date: i.issue_date, due_date: i.due_date, amount_open_cents: i.gross_total_cents })),
};
reconcile(input.t.slice(0, 500), input.i.slice(0, 500)); // warm-up
const runs: number[] = [];
let result!: ReturnType<typeof reconcile>;
for (let k = 0; k < 3; k++) {
  const t0 = performance.now();
  result = reconcile(input.t, input.i);
  runs.push(performance.now() - t0);
}
const byNumber = new Map(invoices.map((i) => [i.number, i.provider_document_id]));
const truth = new Map(txns.map((t) => [t.provider_transaction_id, t.matched_invoice_number ? byNumber.get(t.matched_invoice_number) : undefined]));
let correct = 0;
let wrong = 0;
for (const m of result.matches) for (const id of m.transaction_ids) (m.invoice_ids.includes(truth.get(id)!) ? correct++ : wrong++);
console.log(`${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version}`);
console.log(`${input.t.length} transactions × ${input.i.length} invoices: ${runs.map((r) => (r / 1000).toFixed(2) + ' s').join(', ')}; ${result.summary.matched_transactions} matched (precision ${(correct / (correct + wrong)).toFixed(4)})`);
