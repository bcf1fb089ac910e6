import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { AuditTrail } from './service';
import { Int } from '../../lib/schemas';

export { AuditTrail, entryHash, verifyChain, GENESIS_HASH, type AuditActor, type AuditEntryView } from './service';

export const AuditEntry = t.Object({
  seq: Int({ minimum: 1 }),
  type: t.String({ description: 'operation.created, decision.recorded, operation.approved, operation.funded, document.generated, …' }),
  created_at: t.String({ format: 'date-time' }),
  api_key_id: t.Union([t.String(), t.Null()], { description: 'The key that caused it (null for the service\u2019s own jobs)' }),
  request_id: t.Union([t.String(), t.Null()], { description: 'The request that caused it (X-Request-Id)' }),
  data: t.Record(t.String(), t.Unknown()),
  prev_hash: t.String({ description: 'The previous entry\u2019s hash (64 zeros for the first)' }),
  hash: t.String({ description: 'SHA-256 (hex) of the canonical JSON of prev_hash, seq, type, created_at, api_key_id, request_id and data' }),
});
export const AuditTrailResponse = t.Object({
  subject_id: t.String(),
  entries: t.Array(AuditEntry),
  verified: t.Boolean({ description: 'true when every entry\u2019s hash and link were recomputed and hold' }),
  broken_at_seq: t.Union([Int(), t.Null()], { description: 'the first entry that does not hold, when verified is false' }),
  head_hash: t.String({ description: 'the last entry\u2019s hash: keep it to detect a later rewrite of the whole chain' }),
});

export const auditTrail = (ctx: AppContext) => new AuditTrail(ctx.database, () => ctx.clock.now());

/** GET /v1/audit/{operation_id} (scope `finance`). */
export function auditRoutes(ctx: AppContext, trail: AuditTrail) {
  return new Elysia({ name: 'audit' }).use(authed(ctx, 'finance')).get('/v1/audit/:operation_id', ({ auth, params }) => trail.trail(auth, params.operation_id), {
    params: t.Object({ operation_id: t.String({ pattern: '^(fop|cfp|cpy|ins|ntc)_[0-9a-f-]{36}$', description: 'A factoring operation (fop_), confirming programme (cfp_) or payable (cpy_), insurance submission (ins_) or notice (ntc_)' }) }),
    response: { 200: AuditTrailResponse },
    detail: apiDoc({
      summary: 'The audit trail of an operation or programme, its hash chain verified',
      description: 'Every event of the subject in order (creation, decisions with their inputs\u2019 versions, transitions, documents with their SHA-256, the key id and request id behind each), append-only; each entry is chained to the previous one by hash and the whole chain is recomputed on every read (verified). docs/factoring.md.',
      tag: 'finance',
      security: 'BearerAuth',
      operationId: 'getAuditTrail',
      errors: ['resource_not_found'],
    }),
  });
}
