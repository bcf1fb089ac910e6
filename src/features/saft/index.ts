import { createPublicKey } from 'node:crypto';
import { fullGC } from 'bun:jsc';
import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { ApiError, validationError } from '../../lib/errors';
import { binaryBodies, type StreamBody } from '../../plugins/http-errors';
import { MAX_AMOUNT, parseSaft, type SaftDocument, type SaftResult } from './parser';
import type { Database, Db } from '../../db/client';
import { and, eq, getTableColumns, getTableName, inArray, isNull, lt, or, sql, type Column, type Table } from 'drizzle-orm';
import { Int, VISIBLE_TEXT_MESSAGE } from '../../lib/schemas';
import { ErpCustomerReference } from '../erp/model';
import { Value } from '@sinclair/typebox/value';
import { excludedSet } from '../erp/util';
import { fieldPath, partsAfterFileError, type PartAfterFile } from '../../lib/multipart';

/** a public key's base64 body, whatever its PEM armour, line breaks or spaces (one key sent as PEM and as one line is one key) */
const keyBody = (key: string) => key.replace(/-----(BEGIN|END) (RSA )?PUBLIC KEY-----/g, '').replace(/\s+/g, '');

/** `X-Public-Key`: the producer's RSA public key, PEM on one line or just its base64 body. */
function publicKeyFrom(header: string | undefined, path = 'header.X-Public-Key'): string | null {
  if (!header) return null;
  const body = keyBody(header);
  const refused = () => new ApiError('validation_failed', `${path.replace(/^(header|body)\./, '')} must be a PEM public key (or its base64 body).`, { fields: [{ path, message: 'not a PEM public key' }] });
  if (!/^[A-Za-z0-9+/]+=*$/.test(body) || body.length > 4096) throw refused();
  const pem = `-----BEGIN PUBLIC KEY-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
  // the request's key, not the file's: a key that does not load is the request's fault (a file
  // checked against it was reported invalid, and a good file then not imported)
  let type: string | undefined;
  try {
    type = createPublicKey(pem).asymmetricKeyType;
  } catch {
    throw refused();
  }
  // SAF-T documents are signed RSA-SHA1: another kind of key would accuse every document of being altered
  if (type !== 'rsa') throw new ApiError('validation_failed', `${path.replace(/^(header|body)\./, '')} must be an RSA public key (SAF-T hashes are RSA-SHA1 signatures); this one is ${type ?? 'of an unknown type'}.`, { fields: [{ path, message: 'not an RSA public key' }] });
  return pem;
}

/** A multipart upload's fields (sent before the file part): the same options as the query and header. */
function formOptions(fields: Record<string, string>): { public_key?: string; import?: boolean; customer_reference?: string } {
  const errors: { path: string; message: string }[] = [];
  const out: { public_key?: string; import?: boolean; customer_reference?: string } = {};
  for (const [name, value] of Object.entries(fields)) {
    // (NUL cannot be stored in PostgreSQL text: refused in form fields as in JSON bodies; bytes that
    // are not UTF-8 reach here as U+FFFD, which a JSON body's would not: refused as there)
    if (name.includes('\0') || value.includes('\0')) errors.push({ path: fieldPath(name), message: 'must not contain NUL characters' });
    else if (name.includes('\ufffd') || value.includes('\ufffd')) errors.push({ path: name, message: 'must be valid UTF-8' });
    else if (name === 'public_key') out.public_key = value;
    else if (name === 'import') {
      if (value === 'true' || value === 'false') out.import = value === 'true';
      else errors.push({ path: 'import', message: 'must be true or false' });
    } else if (name === 'customer_reference') {
      // the ERP store's rule, as the query parameter's (the same schema)
      const fits = value.length >= 1 && value.length <= 128;
      if (Value.Check(ErpCustomerReference, value as unknown)) out.customer_reference = value;
      else errors.push({ path: 'customer_reference', message: fits ? VISIBLE_TEXT_MESSAGE : 'must be 1 to 128 characters' });
    } else errors.push({ path: name, message: 'unknown field (public_key, import, customer_reference and the file part are)' });
  }
  if (errors.length) throw validationError(errors);
  return out;
}

/**
 * The stream's first bytes read now, until more than `max` (or its end: `whole`). The stream
 * returned gives them again, then the rest (not read yet) if there is more.
 */
async function peek(stream: ReadableStream<Uint8Array>, max: number): Promise<{ stream: ReadableStream<Uint8Array>; size: number; whole: boolean }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let whole = false;
  while (size <= max) {
    const { done, value } = await reader.read();
    if (done) {
      whole = true;
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  let next = 0;
  return {
    size,
    whole,
    stream: new ReadableStream<Uint8Array>({
      pull: async (c) => {
        if (next < chunks.length) return c.enqueue(chunks[next++]!);
        chunks.length = 0;
        if (whole) return c.close();
        const { done, value } = await reader.read();
        if (done) c.close();
        else c.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    }),
  };
}



/**
 * The file part's stream, refused (422 on each part's name) at its end if the upload sent parts
 * after it: they are not read (the file streams through the parse as it arrives, and its options
 * must be known first), and an `import=true` or a `public_key` sent after the file was silently
 * ignored: a parse without its import, or not verified. The parse has read the file by then; an
 * import's transaction is rolled back and no run is kept, as for any refused request.
 */
function refusingPartsAfter(stream: ReadableStream<Uint8Array>, after: Promise<PartAfterFile[]>): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>({
    pull: async (c) => {
      const { done, value } = await reader.read();
      if (!done) return c.enqueue(value);
      const refused = partsAfterFileError(await after, 'file', ['public_key', 'import', 'customer_reference']);
      if (refused) c.error(refused);
      else c.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

const Check = t.Object({ code: t.String(), severity: t.Union([t.Literal('error'), t.Literal('warning')]), message: t.String(), path: t.Union([t.String(), t.Null()]), line: t.Union([Int(), t.Null()]) });
export const SaftParseResponse = t.Object({
  parse_id: t.String(),
  header: t.Object({
    company_nif: t.Union([t.String(), t.Null()]),
    company_name: t.Union([t.String(), t.Null()]),
    fiscal_year: t.Union([t.String(), t.Null()]),
    start_date: t.Union([t.String(), t.Null()]),
    end_date: t.Union([t.String(), t.Null()]),
    software_certificate: t.Union([t.String(), t.Null()]),
    product: t.Union([t.String(), t.Null()]),
    audit_file_version: t.Union([t.String(), t.Null()]),
    fields: t.Record(t.String(), t.Union([t.String(), t.Null()]), { description: 'Every Header element as read' }),
  }),
  counts: t.Record(t.String(), Int(), { description: 'customers, suppliers, products, tax_table_entries, invoices (and invoices_<type>), payments, movements_of_goods, working_documents' }),
  totals: t.Record(t.String(), t.Object({ declared: t.Record(t.String(), t.Union([t.Number(), t.Null()])), computed: t.Record(t.String(), t.Number()) })),
  checks: t.Array(Check),
  hash_chain: t.Union([t.Literal('verified'), t.Literal('not_verified'), t.Literal('failed')], { description: 'verified with the X-Public-Key given; not_verified without one (only presence and format checked)' }),
  valid: t.Boolean({ description: 'no check of severity error' }),
  bytes: Int(),
  import: t.Union(
    [
      t.Object({
        imported: t.Boolean(),
        provider: t.Literal('saft'),
        customer_reference: t.String(),
        invoices: Int(),
        payments: Int({ description: "the file's payments (receipts), cancelled ones included, as invoices counts its cancelled invoices" }),
        payments_cancelled: Int({ description: 'of them, cancelled (PaymentStatus A): not stored as transactions (one stored by an earlier import is removed)' }),
        reason: t.Union([t.String(), t.Null()]),
      }),
      t.Null(),
    ],
    { description: 'With ?import=true: what was stored (GET /v1/erp/saft/invoices and /transactions read it); a file with errors is not imported' },
  ),
});

class RefuseImport extends Error {
  constructor(readonly result: SaftResult) {
    super('the file has errors');
  }
}

// an amount the parse refuses (not a decimal, or beyond MAX_AMOUNT: the file is then invalid and its
// import rolled back) is stored as 0 meanwhile, so the database never refuses a row of the file
const cents = (x: number) => (Number.isFinite(x) && Math.abs(x) < MAX_AMOUNT ? Math.round(x * 100) : 0);

/**
 * The wall clock of a zone, as Date#toLocaleString('en-US', { timeZone }) writes it (its default
 * fields), from formatters made once: toLocaleString made one per call (~90 µs, and native memory
 * that only a collection frees: an import of 60,000 invoices made 120,000 of them).
 */
const WALL_CLOCK = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' } as const;
const lisbonWall = new Intl.DateTimeFormat('en-US', { ...WALL_CLOCK, timeZone: 'Europe/Lisbon' });
const utcWall = new Intl.DateTimeFormat('en-US', { ...WALL_CLOCK, timeZone: 'UTC' });

/** SAF-T date-times are Lisbon local time without a zone: as an instant (RFC 3339, UTC). */
export function lisbonToIso(local: string): string {
  const asUtc = new Date(`${local.slice(0, 19)}Z`);
  if (Number.isNaN(asUtc.getTime())) return new Date().toISOString();
  const wall = (clock: Intl.DateTimeFormat) => new Date(clock.format(asUtc)).getTime();
  return new Date(asUtc.getTime() - (wall(lisbonWall) - wall(utcWall))).toISOString();
}

/** an insert builder (`tx.insert(table)`), as far as the import uses it */
type InsertInto = { values(row: Record<string, unknown>): { onConflictDoUpdate(config: { target: Column[]; set: Record<string, unknown> }): { prepare(name: string): { execute(row: Record<string, unknown>): Promise<unknown> } } } };

/**
 * Writes the import's rows: an upsert into `table` in the transaction `tx`, on the columns
 * `target`, that sets what the insert would have stored (`excluded`). Prepared from the first row's
 * properties, once for each table, then run with each row's values: Drizzle builds,
 * renders and prepares a statement for every query (~340 µs a row; prepared: ~27 µs), and on SQLite
 * each of those statements holds ~14 KB of native memory (its program and the values bound to it)
 * until a collection finalizes it, memory JSC does not count: an import of 60,000 invoices left
 * hundreds of MB of them to the collector's pace.
 */
function importWriter(dialect: Database['dialect']) {
  const prepared = new Map<string, { execute(row: Record<string, unknown>): Promise<unknown> }>();
  return async (tx: Db, table: Table, target: string[], row: Record<string, unknown>) => {
    const name = getTableName(table);
    let statement = prepared.get(name);
    if (!statement) {
      const into = tx.insert(table as never) as unknown as InsertInto;
      const columns = getTableColumns(table);
      const keys = Object.keys(row);
      const values = Object.fromEntries(keys.map((k) => [k, sql.placeholder(k)]));
      // as a sync's upsert: a row imported again as it was keeps its synced_at (the change feed)
      const set = excludedSet(table as unknown as Record<string, unknown>, keys.filter((k) => k !== 'id' && !target.includes(k)), dialect);
      statement = into
        .values(values)
        .onConflictDoUpdate({ target: target.map((k) => columns[k]!), set })
        .prepare(`saft_import_${name}`);
      prepared.set(name, statement);
    }
    await statement.execute(row);
  };
}

/**
 * The file's documents into the tenant's ERP store (provider saft), batch by batch, in the import's
 * transaction: upserts, so a re-import does not duplicate.
 */
async function storeDocuments(database: Database, tx: Db, upsert: ReturnType<typeof importWriter>, auth: { tenantId: string; env: string }, ref: string, docs: SaftDocument[], counts: { invoices: number; payments: number; payments_cancelled: number }, header: Readonly<Record<string, string | null>>, now: Date) {
  const { t } = database;
  for (const d of docs) {
    if (d.kind !== 'invoice') continue;
    const row = {
      id: Bun.randomUUIDv7(),
      tenantId: auth.tenantId,
      env: auth.env,
      provider: 'saft',
      customerReference: ref,
      providerDocumentId: d.number,
      documentType: d.type,
      number: d.number,
      atcud: d.atcud,
      issueDate: d.date,
      dueDate: null,
      customerNif: d.customer_nif,
      customerName: d.customer_name,
      currency: 'EUR',
      netTotalCents: cents(d.net_total),
      taxTotalCents: cents(d.tax_payable),
      grossTotalCents: cents(d.gross_total),
      status: d.status,
      // the company whose books these are (its invoices' issuer): factoring lets only it assign them
      data: { source: 'saft', customer_id: d.customer_id, system_entry_date: d.system_entry_date, company_nif: header.TaxRegistrationNumber ?? null },
      sourceUpdatedAt: lisbonToIso(d.system_entry_date),
      syncedAt: now,
    };
    await upsert(tx, t.invoices, ['tenantId', 'env', 'provider', 'customerReference', 'providerDocumentId'], row);
    counts.invoices++;
  }
  for (const d of docs) {
    if (d.kind !== 'payment') continue;
    // a cancelled receipt (PaymentStatus A) settled nothing: not stored, and one stored by an earlier
    // import of the file (before it was cancelled) is removed (it would still count as paying its invoice)
    if (d.status === 'A') {
      const bt = t.bankTransactions;
      await tx.delete(bt).where(and(eq(bt.tenantId, auth.tenantId), eq(bt.env, auth.env), eq(bt.provider, 'saft'), eq(bt.customerReference, ref), eq(bt.providerTransactionId, d.number)));
      counts.payments++;
      counts.payments_cancelled++;
      continue;
    }
    // a receipt is the settlement of its invoices, whatever the means (TB transfer, CC card, NU cash…):
    // one transaction of its whole amount, its mechanisms named in its description; not a bank movement
    const settled = [...new Set(d.settles)];
    const means = [...new Set(d.mechanisms)];
    const row = {
      id: Bun.randomUUIDv7(),
      tenantId: auth.tenantId,
      env: auth.env,
      provider: 'saft',
      customerReference: ref,
      providerTransactionId: d.number,
      bookingDate: d.date,
      amountCents: cents(d.gross_total),
      currency: 'EUR',
      description: `RECIBO ${d.number}${settled.length ? ` ${settled.join(' ')}` : ''}${means.length ? ` (${means.join(', ')})` : ''}`,
      counterpartyName: d.customer_name,
      counterpartyIban: null,
      matchedInvoiceNumber: settled[0] ?? null,
      sourceUpdatedAt: lisbonToIso(d.system_entry_date),
      syncedAt: now,
    };
    await upsert(tx, t.bankTransactions, ['tenantId', 'env', 'provider', 'customerReference', 'providerTransactionId'], row);
    counts.payments++;
  }
}

type Caller = { tenantId: string; env: string; keyId: string | null; requestId: string | null };
type SaftAnswer = typeof SaftParseResponse.static;

/**
 * Parses one file (and imports it when asked): the 200 answer, or the result of a background run.
 * `keep` stores the run's answer: in the import's transaction when there is one, so an answered
 * import is never left without its run, nor a run without its rows (in a transaction of its own
 * otherwise). When it throws, nothing of the import is stored.
 */
export async function runParse(
  ctx: AppContext,
  auth: Caller,
  stream: ReadableStream<Uint8Array>,
  o: { contentEncoding: string | null; publicKeyPem: string | null; importAs: string | null; parseId: string; keep: (tx: Db, answer: SaftAnswer) => Promise<void> },
): Promise<SaftAnswer> {
  const limit = ctx.config.saftMaxBytes;
  let source = stream;
  if (o.contentEncoding) {
    if (o.contentEncoding.toLowerCase() !== 'gzip') throw new ApiError('unsupported_media_type', `Content-Encoding ${o.contentEncoding} is not supported (gzip is).`);
    source = source.pipeThrough(new DecompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>);
  }
  let read = 0;
  const capped = (async function* () {
    for await (const chunk of source as unknown as AsyncIterable<Uint8Array>) {
      read += chunk.byteLength;
      if (read > limit) throw new ApiError('payload_too_large', `The SAF-T file exceeds ${limit} bytes.`);
      yield chunk;
    }
  })();
  // the database's own errors (storing rows, keeping the run) go out as they are: only the file's
  // reading and parsing is the body's problem
  const ours = new WeakSet<object>();
  const stored = <R,>(p: Promise<R>) =>
    p.catch((err: unknown) => {
      if (err && typeof err === 'object') ours.add(err);
      throw err;
    });
  const answerOf = (r: SaftResult, imported: SaftAnswer['import']): SaftAnswer => {
    const h = r.header;
    return {
      parse_id: o.parseId,
      header: {
        company_nif: h.TaxRegistrationNumber ?? null,
        company_name: h.CompanyName ?? null,
        fiscal_year: h.FiscalYear ?? null,
        start_date: h.StartDate ?? null,
        end_date: h.EndDate ?? null,
        software_certificate: h.SoftwareCertificateNumber ?? null,
        product: h.ProductID ? `${h.ProductID}${h.ProductVersion ? ` ${h.ProductVersion}` : ''}` : null,
        audit_file_version: h.AuditFileVersion ?? null,
        fields: h,
      },
      counts: r.counts,
      totals: r.totals,
      checks: r.checks,
      hash_chain: r.hash_chain,
      valid: r.valid,
      bytes: r.bytes,
      import: imported,
    };
  };
  try {
    if (o.importAs !== null) {
      // one transaction: a file with errors (found at any point) stores nothing
      const counts = { invoices: 0, payments: 0, payments_cancelled: 0 };
      const ref = o.importAs;
      try {
        return await ctx.database.withTx(async (tx) => {
          const upsert = importWriter(ctx.database.dialect);
          const result = await parseSaft(capped, { publicKeyPem: o.publicKeyPem, onDocuments: (docs, header) => stored(storeDocuments(ctx.database, tx, upsert, auth, ref, docs, counts, header, ctx.clock.now())) });
          if (!result.valid) throw new RefuseImport(result);
          ctx.database.touchTenant(auth.tenantId, 'inputs'); // new books: what its scores read
          const answer = answerOf(result, { imported: true, provider: 'saft', customer_reference: ref, ...counts, reason: null });
          await stored(o.keep(tx, answer));
          return answer;
        });
      } catch (err) {
        if (!(err instanceof RefuseImport)) throw err;
        const answer = answerOf(err.result, { imported: false, provider: 'saft', customer_reference: ref, invoices: 0, payments: 0, payments_cancelled: 0, reason: 'the file has errors (see checks): nothing was stored' });
        await stored(ctx.database.withTx((tx) => o.keep(tx, answer)));
        return answer;
      }
    }
    const answer = answerOf(await parseSaft(capped, { publicKeyPem: o.publicKeyPem }), null);
    await stored(ctx.database.withTx((tx) => o.keep(tx, answer)));
    return answer;
  } catch (err) {
    if (err instanceof ApiError || (err && typeof err === 'object' && ours.has(err))) throw err;
    throw new ApiError('validation_failed', 'The body could not be read (a damaged gzip stream?).', { fields: [{ path: '(body)', message: (err as Error).message.split('\n')[0]!.slice(0, 200) }] });
  }
}

const EMPTY_FILE = 'is empty: send the SAF-T file (application/xml, gzip with Content-Encoding: gzip, or a multipart file part)';

/** The stream as it was, or 422 on `path` if it ends without a byte (its first bytes are read to know). */
async function unlessEmpty(stream: ReadableStream<Uint8Array>, path: string): Promise<ReadableStream<Uint8Array>> {
  const first = await peek(stream, 0);
  if (!first.size) throw validationError([{ path, message: EMPTY_FILE }]);
  return first.stream;
}

const CHUNK_BYTES = 1024 * 1024;
/**
 * How an upload and a run have their garbage collected. Parsing makes garbage (~6-9 MB of strings
 * and objects for each 1 MiB row, most of it memory JSC does not count: the headers of the
 * substrings an XML parser hands out) faster than JSC, pacing its collections on the service's
 * whole heap, collects it, and the allocator keeps every page it once had
 * (MIMALLOC_PURGE_DELAY=-1). So, every ASYNC_COLLECT_EVERY_ROWS rows, Bun.gc(false): a concurrent
 * collection (and the allocator's cleanup), ~0.5 ms of the event loop (at most ~5 ms); a full one
 * (~20-40 ms) only when the process's RSS has grown by RSS_STEP since the last (2-4 for a 200 MB
 * file); on PostgreSQL also every PG_COLLECT_EVERY_ROWS rows. A 200 MB file uploaded and imported
 * on SQLite (bench/saft.ts --background --import, 2026-11-28, from ~170 MB): 286-298 MB RSS with no
 * collection, 272-297 MB with full ones as RSS grows, 217-258 MB with these (237-263 not importing);
 * a full one every 4 rows, as before (96 of them, 2.2-3.6 s of pauses): 274-304 MB. Asking for a
 * concurrent one every row is worse (~280 MB: collections back to back keep what is allocated while
 * they run), young-generation ones too (they promote what the parse holds at that moment).
 * PostgreSQL's driver adds ~3-4 MB of garbage a row (the query's message, the socket's pieces and
 * their join, the row's text): ~325 MB without the full collections every 8 rows, 238-270 with them.
 */
const ASYNC_COLLECT_EVERY_ROWS = 2;
const RSS_STEP = 16 * 1024 * 1024;
const PG_COLLECT_EVERY_ROWS = 8;
let rssMark = 0;
const collectAfterRow = (dialect: Database['dialect'], rows: number) => {
  if (rows === 0) return;
  const rss = process.memoryUsage.rss();
  if (rss < rssMark || !rssMark) rssMark = rss;
  if (rss - rssMark >= RSS_STEP || (dialect === 'postgres' && rows % PG_COLLECT_EVERY_ROWS === 0)) {
    fullGC();
    rssMark = process.memoryUsage.rss();
  } else if (rows % ASYNC_COLLECT_EVERY_ROWS === 0) Bun.gc(false);
};
/** what the background parse takes in one turn of the event loop (~1–2 ms of parsing) */
const SLICE_BYTES = 64 * 1024;
/** the base64 text of a full row (4 characters for every 3 bytes, padded) */
const CHUNK_TEXT_BYTES = Math.ceil(CHUNK_BYTES / 3) * 4;
const BASE64 = new TextEncoder().encode('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
const PAD = 61; // '='
/**
 * The base64 text of `bytes` written into `out` as ASCII bytes (its length returned): a row's text
 * without a string of it. ~1.4 ms a MiB (Buffer#toString: ~0.4 ms, and a 1.4 MB string to collect).
 */
export function base64Into(bytes: Uint8Array, out: Uint8Array): number {
  const whole = bytes.length - (bytes.length % 3);
  let o = 0;
  for (let i = 0; i < whole; i += 3, o += 4) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o] = BASE64[v >>> 18]!;
    out[o + 1] = BASE64[(v >>> 12) & 63]!;
    out[o + 2] = BASE64[(v >>> 6) & 63]!;
    out[o + 3] = BASE64[v & 63]!;
  }
  const rest = bytes.length - whole;
  if (rest) {
    const v = (bytes[whole]! << 16) | (rest === 2 ? bytes[whole + 1]! << 8 : 0);
    out[o] = BASE64[v >>> 18]!;
    out[o + 1] = BASE64[(v >>> 12) & 63]!;
    out[o + 2] = rest === 2 ? BASE64[(v >>> 6) & 63]! : PAD;
    out[o + 3] = PAD;
    o += 4;
  }
  return o;
}

/**
 * Stores an upload for a background run, 1 MiB per row; the run is queued once the file is whole.
 * The row's bytes and its base64 text are built in two buffers of the upload's own, reused for every
 * row (a Buffer.concat and a 1.4 MB string a row were garbage left to the collector's pace).
 */
async function storeUpload(ctx: AppContext, auth: Caller, b: StreamBody, o: { publicKeyPem: string | null; importAs: string | null }) {
  const limit = ctx.config.saftMaxBytes;
  const { t, withTx, dialect } = ctx.database;
  const id = `saft_${Bun.randomUUIDv7()}`;
  await withTx((tx) => tx.insert(t.saftRuns).values({ id, tenantId: auth.tenantId, env: auth.env, status: 'receiving', bytes: 0, contentEncoding: b.contentEncoding, publicKeyPem: o.publicKeyPem, importAs: o.importAs, createdAt: ctx.clock.now() }));
  let seq = 0;
  let bytes = 0;
  const row = Buffer.allocUnsafe(CHUNK_BYTES);
  const text = Buffer.allocUnsafe(CHUNK_TEXT_BYTES);
  let pendingBytes = 0;
  // SQLite: one statement for every row (Drizzle prepares a statement for each query, which holds
  // the values bound to it, here a row's 1.4 MB of text, until a collection finalizes it: native
  // memory that JSC does not count, and does not collect for: the upload of a 200 MB file took the
  // service from ~170 to ~300 MB RSS, ~200 MB now), the text's bytes bound as they are and cast (the
  // same TEXT value, without a string of it). PostgreSQL's driver would send bytes as hex: the text
  // goes as a string
  const insertRow =
    dialect === 'sqlite'
      ? ctx.database.db
          .insert(t.saftChunks)
          .values({ id: sql.placeholder('id'), runId: id, seq: sql.placeholder('seq'), data: sql`CAST(${sql.placeholder('data')} AS TEXT)` })
          .prepare('saft_chunk')
      : null;
  const flush = async () => {
    if (!pendingBytes) return;
    const length = base64Into(row.subarray(0, pendingBytes), text);
    pendingBytes = 0;
    const n = seq++;
    if (insertRow) await withTx(() => insertRow.execute({ id: `${id}:${n}`, seq: n, data: text.subarray(0, length) }));
    else await withTx((tx) => tx.insert(t.saftChunks).values({ id: `${id}:${n}`, runId: id, seq: n, data: text.toString('latin1', 0, length) }));
    collectAfterRow(dialect, seq);
  };
  try {
    for await (const chunk of b.stream as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      if (bytes > limit) throw new ApiError('payload_too_large', `The SAF-T file exceeds ${limit} bytes.`);
      // rows of 1 MiB whatever the pieces the body comes in (a body read in one piece was one row,
      // which the run then decoded whole)
      for (let at = 0; at < chunk.byteLength; ) {
        const piece = chunk.subarray(at, at + CHUNK_BYTES - pendingBytes);
        row.set(piece, pendingBytes);
        pendingBytes += piece.byteLength;
        at += piece.byteLength;
        if (pendingBytes === CHUNK_BYTES) await flush();
      }
    }
    await flush();
    await withTx((tx) => tx.update(t.saftRuns).set({ status: 'queued', bytes }).where(eq(t.saftRuns.id, id)));
  } catch (err) {
    await withTx(async (tx) => {
      await tx.delete(t.saftChunks).where(eq(t.saftChunks.runId, id));
      await tx.delete(t.saftRuns).where(eq(t.saftRuns.id, id));
    });
    throw err;
  }
  await enqueueRun(ctx, id, 0);
  return { id, bytes };
}

export const SAFT_RECOVER_SWEEP = 'saft.recover';
export const SAFT_MAX_ATTEMPTS = 3;

async function enqueueRun(ctx: AppContext, runId: string, attempts: number) {
  try {
    await ctx.jobs.enqueue('saft.parse', { runId }, { jobId: `${runId}_a${attempts}` });
  } catch (err) {
    // the run stays queued in the database: the recovery sweep enqueues it again
    ctx.log.error('saft enqueue failed', { runId, error: (err as Error).message });
  }
}

/**
 * The job: claims a queued run (or one whose worker stopped beating), streams its file back from the
 * chunks, parses it and stores the answer. The claim's attempt number is the ownership token: a
 * worker that was taken for dead cannot overwrite the run of the worker that took it over.
 */
export async function processSaftRun(ctx: AppContext, runId: string) {
  const { t, withTx, db } = ctx.database;
  const r = t.saftRuns;
  const stallMs = ctx.config.saftStallMs;
  const now = ctx.clock.now();
  const claimed = await withTx((tx) =>
    tx
      .update(r)
      .set({ status: 'running', attempts: sql`${r.attempts} + 1`, heartbeatAt: now })
      .where(and(eq(r.id, runId), or(eq(r.status, 'queued'), and(eq(r.status, 'running'), or(isNull(r.heartbeatAt), lt(r.heartbeatAt, new Date(now.getTime() - stallMs))))), lt(r.attempts, SAFT_MAX_ATTEMPTS)))
      .returning(),
  );
  const run = claimed[0];
  if (!run) return;
  const mine = and(eq(r.id, runId), eq(r.status, 'running'), eq(r.attempts, run.attempts));
  let lastBeat = Date.now();
  let seq = 0;
  // a plain file is decoded into one buffer, reused for every row: the stream hands a row over only
  // when the parse asks for it (highWaterMark 0), and the parse is done with a row's bytes before it
  // asks for the next one (parseSaft decodes each chunk as it comes). Through gzip the inflater may
  // still hold a row when the next is read: a buffer of its own each
  const reused = run.contentEncoding ? null : Buffer.allocUnsafe(CHUNK_BYTES);
  // a row is handed to the parse in slices, a turn of the event loop between them: the parse of a
  // whole 1 MiB row held the loop (other requests, timers) 20–45 ms. Compressed, a slice inflates ~10×
  const sliceBytes = run.contentEncoding ? SLICE_BYTES / 8 : SLICE_BYTES;
  let current: Uint8Array | null = null;
  let sliced = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // a turn of the event loop between slices: the run reads its chunks without waiting (SQLite)
        // and parses each at once, and held the loop (requests, timers) for its whole file
        await new Promise((resolve) => setImmediate(resolve));
        if (current && sliced < current.byteLength) {
          controller.enqueue(current.subarray(sliced, (sliced += sliceBytes)));
          return;
        }
        collectAfterRow(ctx.database.dialect, seq);
        if (Date.now() - lastBeat > Math.max(50, stallMs / 3)) {
          lastBeat = Date.now();
          const beat = await db.update(r).set({ heartbeatAt: ctx.clock.now() }).where(mine).returning({ id: r.id });
          if (!beat.length) return controller.error(new Error('the run was taken over by another worker'));
        }
        const [row] = await db.select({ data: t.saftChunks.data }).from(t.saftChunks).where(and(eq(t.saftChunks.runId, runId), eq(t.saftChunks.seq, seq)));
        seq++;
        if (!row) return controller.close();
        // (a row stored before rows were 1 MiB each can be larger: a buffer of its own)
        current = !reused || row.data.length > CHUNK_TEXT_BYTES ? Buffer.from(row.data, 'base64') : reused.subarray(0, reused.write(row.data, 'base64'));
        controller.enqueue(current.subarray(0, (sliced = sliceBytes)));
      },
    },
    { highWaterMark: 0 },
  );
  // the run is still this worker's when its answer is kept (in the import's transaction: a worker
  // taken for dead meanwhile stores none of its rows either)
  const finish = async (tx: Db, set: { status: 'succeeded' | 'failed'; result: string | null; errorMessage: string | null }) => {
    const done = await tx.update(r).set({ ...set, finishedAt: ctx.clock.now() }).where(mine).returning({ id: r.id });
    if (!done.length) throw new RunTakenOver();
  };
  try {
    const caller = { tenantId: run.tenantId, env: run.env, keyId: null, requestId: null };
    await runParse(ctx, caller, stream, {
      contentEncoding: run.contentEncoding,
      publicKeyPem: run.publicKeyPem,
      importAs: run.importAs,
      parseId: run.id,
      keep: (tx, answer) => finish(tx, { status: 'succeeded', result: JSON.stringify(answer), errorMessage: null }),
    });
  } catch (err) {
    if (err instanceof RunTakenOver) return;
    if (!(err instanceof ApiError)) ctx.log.error('saft run failed', { runId, error: (err as Error).message });
    const errorMessage = err instanceof ApiError ? err.message : 'The file could not be parsed; quote the parse_id to support.';
    try {
      await withTx((tx) => finish(tx, { status: 'failed', result: null, errorMessage }));
    } catch (e) {
      if (e instanceof RunTakenOver) return;
      throw e;
    }
  }
  await dropChunks(ctx, runId);
}

/** A background run's worker was taken for dead and another took the run over: it keeps nothing. */
class RunTakenOver extends Error {}

/**
 * A finished run's stored file, a few rows a transaction with a turn of the event loop between: in
 * one transaction SQLite was held ~0.2 s for a 200 MB file (secure_delete overwrites every page).
 * Rows left by a process that stopped meanwhile are dropped by the recovery sweep.
 */
async function dropChunks(ctx: AppContext, runId: string) {
  const { t, withTx } = ctx.database;
  const c = t.saftChunks;
  for (;;) {
    const gone = await withTx((tx) => tx.delete(c).where(inArray(c.id, tx.select({ id: c.id }).from(c).where(eq(c.runId, runId)).limit(DROP_ROWS))).returning({ id: c.id }));
    if (gone.length < DROP_ROWS) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
const DROP_ROWS = 4;

/**
 * The recovery sweep: runs still queued (their job lost with a process) are enqueued again; runs
 * whose worker stopped beating for SAFT_STALL_MS are retried from the start of the file (the
 * chunks stay until a run ends, and an import is one transaction, so nothing is half-stored),
 * at most SAFT_MAX_ATTEMPTS times, then failed.
 */
export async function recoverSaftRuns(ctx: AppContext): Promise<{ requeued: number; failed: number }> {
  const { t, db, withTx } = ctx.database;
  const r = t.saftRuns;
  const now = ctx.clock.now();
  const queuedBefore = new Date(now.getTime() - ctx.config.saftStallMs);
  const staleBefore = new Date(now.getTime() - ctx.config.saftStallMs);
  const queued = await db.select({ id: r.id, attempts: r.attempts }).from(r).where(and(eq(r.status, 'queued'), lt(r.createdAt, queuedBefore))).limit(100);
  const stalled = await db.select({ id: r.id, attempts: r.attempts }).from(r).where(and(eq(r.status, 'running'), or(isNull(r.heartbeatAt), lt(r.heartbeatAt, staleBefore)))).limit(100);
  let requeued = 0;
  let failed = 0;
  for (const q of [...queued, ...stalled]) {
    if (q.attempts >= SAFT_MAX_ATTEMPTS) {
      const gaveUp = await withTx((tx) =>
        tx
          .update(r)
          .set({ status: 'failed', errorMessage: `The run stopped ${q.attempts} times without finishing (worker lost); send the file again.`, finishedAt: now })
          .where(and(eq(r.id, q.id), eq(r.attempts, q.attempts), eq(r.status, 'running')))
          .returning({ id: r.id }),
      );
      if (gaveUp.length) await dropChunks(ctx, q.id);
      failed += gaveUp.length;
    } else {
      await enqueueRun(ctx, q.id, q.attempts);
      requeued++;
    }
  }
  // the stored files of finished runs whose process stopped while dropping them
  const leftOver = await db.selectDistinct({ runId: t.saftChunks.runId }).from(t.saftChunks).innerJoin(r, eq(r.id, t.saftChunks.runId)).where(inArray(r.status, ['succeeded', 'failed'])).limit(100);
  for (const { runId } of leftOver) await dropChunks(ctx, runId);
  if (requeued || failed) ctx.log.warn('saft run recovery', { requeued, failed });
  return { requeued, failed };
}

export const SaftRun = t.Object({
  parse_id: t.String(),
  status: t.Union([t.Literal('queued'), t.Literal('running'), t.Literal('succeeded'), t.Literal('failed')]),
  bytes: Int(),
  error: t.Union([t.String(), t.Null()]),
  result: t.Union([SaftParseResponse, t.Null()], { description: 'The parse result once succeeded' }),
});

/** POST /v1/saft/parse (scope `erp`): a SAF-T (PT) file streamed, parsed and checked. */
export function saftRoutes(ctx: AppContext) {
  const limit = ctx.config.saftMaxBytes;
  const xmlTypes = binaryBodies(ctx.config)['/v1/saft/parse']!.types;
  return new Elysia({ name: 'saft' })
    .use(authed(ctx, 'erp'))
    .post(
      '/v1/saft/parse',
      async ({ auth, body, headers, query, set }) => {
        // an empty body is read as no body at all (HTTP gives no stream for Content-Length: 0)
        if (headers['content-length'] === '0' || ((!body || typeof body !== 'object' || !('stream' in body)) && xmlTypes.test(headers['content-type'] ?? '')))
          throw validationError([{ path: '(body)', message: EMPTY_FILE }]);
        if (!body || typeof body !== 'object' || !('stream' in body))
          throw new ApiError('unsupported_media_type', 'Send the SAF-T file itself as the body, with Content-Type: application/xml (gzip with Content-Encoding: gzip).');
        const b = body as StreamBody;
        const form = formOptions(b.fields ?? {});
        // an option given both as a form field and in the query (or the key's header) with other
        // values is refused, naming both: neither is the one the client surely meant
        const twice = (
          [
            ['import', query.import, form.import, 'query.import'],
            ['customer_reference', query.customer_reference, form.customer_reference, 'query.customer_reference'],
            ['public_key', headers['x-public-key'], form.public_key, 'header.X-Public-Key'],
          ] as const
        ).filter(([name, other, field]) => other !== undefined && field !== undefined && (name === 'public_key' ? keyBody(other as string) !== keyBody(field as string) : other !== field));
        if (twice.length)
          throw validationError(twice.flatMap(([name, , , otherPath]) => [
            { path: otherPath, message: `differs from the form field ${name}: give it once` },
            { path: name, message: `differs from ${otherPath}: give it once` },
          ]));
        const key = form.public_key !== undefined ? publicKeyFrom(form.public_key, 'public_key') : publicKeyFrom(headers['x-public-key']);
        if (b.contentEncoding && b.contentEncoding.toLowerCase() !== 'gzip') throw new ApiError('unsupported_media_type', `Content-Encoding ${b.contentEncoding} is not supported (gzip is).`);
        const importAs = (query.import ?? form.import) ? (query.customer_reference ?? form.customer_reference ?? 'saft') : null;
        // a file part without a byte is refused as an empty body is (the raw body's case is above)
        const file = await unlessEmpty(b.stream, b.fields ? 'file' : '(body)');
        // parts after the file are known once the body is read: refused then (422), never ignored unsaid
        const after = b.afterFile;
        let stream = after ? refusingPartsAfter(file, after) : file;
        ctx.usage.record({ tenantId: auth.tenantId, apiKeyId: auth.keyId, env: auth.env, requestId: auth.requestId, meter: 'saft_parse' });
        let large = b.length !== null && b.length > ctx.config.saftSyncMaxBytes;
        if (importAs !== null && !large) {
          // an import parses in one transaction, which holds the database's writes: the upload is
          // read first (up to SAFT_SYNC_MAX_BYTES), so a slow or stalled client never holds them;
          // one larger than declared (or of no declared length) goes the background way
          const read = await peek(stream, ctx.config.saftSyncMaxBytes);
          stream = read.stream;
          large = !read.whole;
        }
        if (large) {
          // a large file: stored, parsed by the job queue, polled
          const run = await storeUpload(ctx, auth, { ...b, stream }, { publicKeyPem: key, importAs });
          set.status = 202;
          set.headers.location = `/v1/saft/parse/${run.id}`;
          return { parse_id: run.id, status: 'queued' as const, bytes: run.bytes, error: null, result: null };
        }
        // answered at once, and kept as a succeeded run: its parse_id can be fetched as a 202's can
        const parseId = `saft_${Bun.randomUUIDv7()}`;
        let bytes = 0;
        const counted = stream.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              bytes += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }),
        );
        return runParse(ctx, auth, counted, {
          contentEncoding: b.contentEncoding,
          publicKeyPem: key,
          importAs,
          parseId,
          keep: async (tx, answer) => {
            const now = ctx.clock.now();
            await tx.insert(ctx.database.t.saftRuns).values({ id: parseId, tenantId: auth.tenantId, env: auth.env, status: 'succeeded', bytes, contentEncoding: b.contentEncoding, importAs, result: JSON.stringify(answer), createdAt: now, finishedAt: now });
          },
        });
      },
      {
        query: t.Object({
          import: t.Optional(t.Boolean({ description: 'store the invoices and payments of a file without errors in the ERP store (provider saft)' })),
          customer_reference: t.Optional(t.String({ ...ErpCustomerReference, description: 'the customer_reference to store them under (default saft): 1–128 characters, at least one visible, no control characters' })),
        }),
        response: { 200: SaftParseResponse, 202: SaftRun },
        detail: apiDoc({
          summary: 'Parse and check a SAF-T (PT) 1.04_01 file (202 and a run to poll above SAFT_SYNC_MAX_BYTES)',
          description:
            'The file itself as the body (application/xml; gzip with Content-Encoding: gzip), or a multipart/form-data upload (fields public_key, import, customer_reference before the part named file, a part after it is 422 on its name; a .gz filename or an application/gzip part is gunzipped), streamed in the encoding its XML declaration names. Header, counts, declared against computed totals, and checks: namespace and version, header fields, totals, numbering per series, references to MasterFiles, NIF check digits, ATCUD, and the hash chain (RSA-SHA1) when X-Public-Key gives the producer\\u2019s public key. docs/saft.md.',
          tag: 'erp',
          security: 'BearerAuth',
          operationId: 'saftParse',
          headerParams: { 'X-Public-Key': 'The producer\u2019s RSA public key, the PEM on one line or just its base64 body: the hash chain is verified with it (without it: not_verified). A value that is not a loadable public key is 422 on header.X-Public-Key.' },
          binaryBody: {
            types: ['application/xml', 'text/xml'],
            maxBytes: limit,
            fileExamples: {
              'application/xml': {
                opening: {
                  summary: 'How a SAF-T (PT) file opens, as text in UTF-8 (the whole demo file, in Windows-1252 as the tax authority publishes it: fixtures/saft/saft_idemo599999999.xml)',
                  value:
                    '<?xml version="1.0" encoding="UTF-8"?>\n<AuditFile xmlns="urn:OECD:StandardAuditFile-Tax:PT_1.04_01">\n  <Header>\n    <AuditFileVersion>1.04_01</AuditFileVersion>\n    <CompanyID>599999993</CompanyID>\n    <TaxRegistrationNumber>599999993</TaxRegistrationNumber>\n    <TaxAccountingBasis>F</TaxAccountingBasis>\n    <CompanyName>Entidade comercial - Demonstração</CompanyName>\n    …\n  </Header>\n  <MasterFiles>…</MasterFiles>\n  <SourceDocuments>…</SourceDocuments>\n</AuditFile>',
                },
              },
            },
            formFields: {
              public_key: { type: 'string', description: 'The producer\u2019s public key (PEM): as the X-Public-Key header' },
              import: { type: 'string', enum: ['true', 'false'], description: 'as the import query parameter' },
              customer_reference: { type: 'string', minLength: 1, maxLength: 128, description: 'as the customer_reference query parameter' },
            },
          },
          created: 'A large file’s background run (202): poll it',
        }),
      },
    )
    .get(
      '/v1/saft/parse/:id',
      async ({ auth, params }) => {
        const r = ctx.database.t.saftRuns;
        const [run] = await ctx.database.db.select().from(r).where(and(eq(r.tenantId, auth.tenantId), eq(r.env, auth.env), eq(r.id, params.id))).limit(1);
        if (!run || run.status === 'receiving') throw new ApiError('resource_not_found', `No SAF-T run ${params.id} for this tenant in this environment.`);
        return { parse_id: run.id, status: run.status as 'queued' | 'running' | 'succeeded' | 'failed', bytes: Number(run.bytes), error: run.errorMessage, result: run.result ? JSON.parse(run.result) : null };
      },
      {
        params: t.Object({ id: t.String({ pattern: '^saft_[0-9a-f-]{36}$' }) }),
        response: { 200: SaftRun },
        detail: apiDoc({ summary: 'A SAF-T parse by its parse_id: a background run\u2019s status and its result once done; a parse answered at once (200) is a succeeded run', tag: 'erp', security: 'BearerAuth', operationId: 'saftParseRun', errors: ['resource_not_found'] }),
      },
    );
}
