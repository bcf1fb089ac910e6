import { and, asc, desc, eq } from 'drizzle-orm';
import { canonicalJson } from '../../lib/canonical-json';
import type { Database, Db } from '../../db/client';
import { ApiError } from '../../lib/errors';

/**
 * The audit trail of an operation or programme: append-only entries, each chained to the one
 * before by hash — hash = SHA-256 of (prev_hash, seq, type, created_at, key id, request id, data)
 * in a canonical JSON — so changing, removing or reordering an entry breaks every hash after it.
 * The first entry's prev_hash is 64 zeros. Writers append inside the transaction that makes the
 * change they record; the unique (subject_id, seq) index makes two concurrent appends for one
 * subject conflict rather than fork the chain (the loser's transaction fails and is retried).
 */
export const GENESIS_HASH = '0'.repeat(64);

export interface AuditActor {
  tenantId: string;
  env: string;
  keyId: string | null;
  requestId: string | null;
}

export interface AuditEntryView {
  seq: number;
  type: string;
  created_at: string;
  api_key_id: string | null;
  request_id: string | null;
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}


export function entryHash(e: Omit<AuditEntryView, 'hash'>): string {
  const material = canonicalJson({ prev_hash: e.prev_hash, seq: e.seq, type: e.type, created_at: e.created_at, api_key_id: e.api_key_id, request_id: e.request_id, data: e.data });
  return new Bun.CryptoHasher('sha256').update(material).digest('hex');
}

/** Checks a trail in seq order: the first entry whose hash or link does not hold, or null. */
export function verifyChain(entries: AuditEntryView[]): { verified: boolean; broken_at_seq: number | null } {
  let prev = GENESIS_HASH;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.seq !== i + 1 || e.prev_hash !== prev || entryHash(e) !== e.hash) return { verified: false, broken_at_seq: e.seq };
    prev = e.hash;
  }
  return { verified: true, broken_at_seq: null };
}

export class AuditTrail {
  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
  ) {}

  /** Appends one entry to a subject's trail, in the caller's transaction. */
  async append(tx: Db, actor: AuditActor, subjectId: string, type: string, data: Record<string, unknown>): Promise<AuditEntryView> {
    const a = this.database.t.auditEntries;
    const [last] = await tx.select({ seq: a.seq, hash: a.hash }).from(a).where(eq(a.subjectId, subjectId)).orderBy(desc(a.seq)).limit(1);
    const createdAt = this.now();
    const base = {
      seq: (last?.seq ?? 0) + 1,
      type,
      created_at: createdAt.toISOString(),
      api_key_id: actor.keyId,
      request_id: actor.requestId,
      // through JSON once, so what is hashed is exactly what is stored and read back
      data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
      prev_hash: last?.hash ?? GENESIS_HASH,
    };
    const entry = { ...base, hash: entryHash(base) };
    await tx.insert(a).values({
      id: `aud_${Bun.randomUUIDv7()}`,
      tenantId: actor.tenantId,
      env: actor.env,
      subjectId,
      seq: entry.seq,
      type,
      data: entry.data,
      apiKeyId: actor.keyId,
      requestId: actor.requestId,
      prevHash: entry.prev_hash,
      hash: entry.hash,
      createdAt,
    });
    return entry;
  }

  /** A subject's whole trail, checked; 404 when the tenant has none under this id. */
  async trail(caller: { tenantId: string; env: string }, subjectId: string) {
    const a = this.database.t.auditEntries;
    const rows = await this.database.db
      .select()
      .from(a)
      .where(and(eq(a.tenantId, caller.tenantId), eq(a.env, caller.env), eq(a.subjectId, subjectId)))
      .orderBy(asc(a.seq));
    if (!rows.length) throw new ApiError('resource_not_found', `No audit trail for ${subjectId} in this tenant and environment.`);
    const entries: AuditEntryView[] = rows.map((r) => ({
      seq: r.seq,
      type: r.type,
      created_at: r.createdAt.toISOString(),
      api_key_id: r.apiKeyId,
      request_id: r.requestId,
      data: r.data,
      prev_hash: r.prevHash,
      hash: r.hash,
    }));
    const check = verifyChain(entries);
    return { subject_id: subjectId, entries, verified: check.verified, broken_at_seq: check.broken_at_seq, head_hash: entries[entries.length - 1]!.hash };
  }
}
