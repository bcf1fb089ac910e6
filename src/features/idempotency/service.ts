import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import type { SecretBox } from '../../lib/crypto';
import { bodyDigest, isStreamBody, StreamDigest, streamMatches } from './fingerprint';

/**
 * Idempotency-Key records (Stripe's model), each API key's (or OAuth client's) apart. The first
 * request that passes auth and validation claims the key (insert; the unique index on
 * tenant+env+key, the key prefixed by its sender's id, decides races across processes),
 * runs, and stores its status and body for 24 h. A replay with the same method, path (with its
 * query) and body (fingerprint.ts) gets the stored bytes; a different request with the key gets 422 idempotency_key_reused; a
 * replay while the first still runs gets 409 idempotency_key_in_use. 5xx outcomes are not stored
 * (the claim is released) so that a retry can succeed. A claim without a sign of life for
 * LOCK_TIMEOUT_MS is considered abandoned (its process died) and can be taken over: its created_at,
 * which a streamed upload's claim moves on as its bytes arrive (a 600 MiB file on a slow link takes
 * longer than the timeout, and a retry must not run it a second time meanwhile).
 */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
export const LOCK_TIMEOUT_MS = 120_000;
export const IDEMPOTENCY_KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: string;
  /** the answer's own headers that a replay repeats (REPLAYED_HEADERS) */
  headers: Record<string, string>;
}

/**
 * Headers that belong to the answer rather than to the request that got it: a replay repeats
 * them (the language of the text, a created resource's Location), while x-request-id, rate-limit
 * and cache headers are the replaying request's own.
 */
export const REPLAYED_HEADERS = ['content-language', 'vary', 'location'] as const;


type IdemRow = Database['t']['idempotencyKeys']['$inferSelect'];
const ph = (name: string) => sql.placeholder(name);

export class IdempotencyService {
  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
    /** stored responses can hold one-time secrets (a rotated key, a webhook secret): sealed at rest */
    private readonly box: SecretBox,
  ) {}

  /** the three statements of every idempotent request, prepared once */
  private stmts?: {
    claim: { execute(p: Record<string, unknown>): Promise<{ id: string }[]> };
    find: { execute(p: Record<string, unknown>): Promise<IdemRow[]> };
    done: { execute(p: Record<string, unknown>): Promise<unknown> };
    alive: { execute(p: Record<string, unknown>): Promise<unknown> };
  };
  private prepared() {
    const { db, t } = this.database;
    const k = t.idempotencyKeys;
    return (this.stmts ??= {
      claim: db
        .insert(k)
        .values({ id: ph('id'), tenantId: ph('tenantId'), env: ph('env'), key: ph('key'), method: ph('method'), path: ph('path'), bodyHash: ph('bodyHash'), state: 'running', createdAt: ph('createdAt'), expiresAt: ph('expiresAt') } as never)
        .onConflictDoNothing()
        .returning({ id: k.id })
        .prepare('idem_claim') as never,
      find: db.select().from(k).where(and(eq(k.tenantId, ph('tenantId')), eq(k.env, ph('env')), eq(k.key, ph('key')))).prepare('idem_find') as never,
      // a streamed body's hash is known once its route has read it (StreamDigest): set with the answer
      done: db
        .update(k)
        .set({ state: 'done', responseStatus: ph('status'), responseBody: ph('body'), responseHeaders: ph('headers'), bodyHash: sql`coalesce(${ph('bodyHash')}, ${k.bodyHash})` } as never)
        .where(eq(k.id, ph('id')))
        .prepare('idem_done') as never,
      alive: db
        .update(k)
        .set({ createdAt: ph('now') } as never)
        .where(and(eq(k.id, ph('id')), eq(k.state, 'running')))
        .prepare('idem_alive') as never,
    });
  }

  /**
   * `scope.principalId`: the API key (or OAuth client) that sent the request. Each has its own keys:
   * a replay hands over what the first request was answered, one-time secrets included (a new key,
   * a rotated one), so another key of the tenant — perhaps one with fewer scopes, refused that
   * request — must not get it by sending the same Idempotency-Key.
   */
  /** claims of streamed bodies: what their routes read, sealed when the answer is stored */
  private readonly streams = new Map<string, { digest: StreamDigest; head: string }>();

  /** `path`: with its query (canonicalQuery), which can change what a POST does (`?import=true`) */
  async begin(scope: { tenantId: string; env: string; principalId: string }, callerKey: string, method: string, path: string, body: unknown, headers: Record<string, string> | null = null):
    Promise<{ claimed: string } | { replay: StoredResponse }> {
    const { withTx, t } = this.database;
    const stmts = this.prepared();
    const streamed = isStreamBody(body) ? body : null;
    const head = bodyDigest(body, headers);
    // a streamed body's claim holds the rest of its fingerprint once its route has read it (complete)
    const bodyHash = streamed ? `${head}|pending` : head;
    const key = `${scope.principalId}:${callerKey}`;
    for (let attempt = 0; attempt < 4; attempt++) {
      const now = this.now();
      const id = crypto.randomUUID();
      const inserted = await this.database.writeOne(() =>
        stmts.claim.execute({ id, tenantId: scope.tenantId, env: scope.env, key, method, path, bodyHash, createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) }),
      );
      if (inserted.length) {
        if (streamed) {
          const alive = () =>
            void this.database.writeOne(() => stmts.alive.execute({ id, now: this.now() })).catch(() => {}); // the next sign, or the timeout, follows
          const digest = new StreamDigest(alive, () => this.now().getTime(), LOCK_TIMEOUT_MS / 4);
          streamed.stream = digest.wrap(streamed.stream);
          // bounded: a claim whose route never answers (its process busy past the lock timeout) is taken over anyway
          if (this.streams.size >= 1000) this.streams.delete(this.streams.keys().next().value!);
          this.streams.set(id, { digest, head });
        }
        return { claimed: id };
      }
      const [row] = await stmts.find.execute({ tenantId: scope.tenantId, env: scope.env, key });
      if (!row) continue;
      const abandoned = row.state === 'running' && row.createdAt.getTime() + LOCK_TIMEOUT_MS <= now.getTime();
      if (row.expiresAt.getTime() <= now.getTime() || abandoned) {
        // only the claim as read: one whose upload showed a sign of life meanwhile (created_at moved on) stays
        await withTx((tx) => tx.delete(t.idempotencyKeys).where(and(eq(t.idempotencyKeys.id, row.id), eq(t.idempotencyKeys.state, row.state), eq(t.idempotencyKeys.createdAt, row.createdAt))));
        continue;
      }
      const sameBody = streamed
        ? row.state === 'running' || (row.bodyHash.startsWith(`${head}|stream:`) && (await streamMatches(row.bodyHash.slice(head.length + 1), streamed.stream)))
        : row.bodyHash === bodyHash;
      if (row.method !== method || row.path !== path || !sameBody)
        throw new ApiError(
          'idempotency_key_reused',
          `Idempotency-Key "${callerKey}" was already used for a different request (${row.method} ${row.path}${row.method !== method || row.path !== path ? '' : ' with another body'}). Use a new key for a new request.`,
        );
      if (row.state === 'running')
        throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress; retry after it completes.', {
          headers: { 'retry-after': '1' },
        });
      return { replay: { status: row.responseStatus ?? 200, body: row.responseBody ? this.box.open(row.responseBody) : '', headers: row.responseHeaders ?? {} } };
    }
    throw new ApiError('idempotency_key_in_use', 'The Idempotency-Key is contended; retry.', { headers: { 'retry-after': '1' } });
  }

  /** `headers`: the answer's headers; those in REPLAYED_HEADERS are stored with it */
  async complete(claimId: string, status: number, body: string, headers: Headers | Record<string, unknown> = {}) {
    const { withTx, t } = this.database;
    const streamed = this.streams.get(claimId);
    this.streams.delete(claimId);
    if (status >= 500) return void (await withTx((tx) => tx.delete(t.idempotencyKeys).where(eq(t.idempotencyKeys.id, claimId))));
    const replayed: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = headers instanceof Headers ? headers.get(name) : headers[name];
      if (typeof value === 'string' && value) replayed[name] = value;
    }
    const stored = Object.keys(replayed).length ? replayed : null;
    const bodyHash = streamed ? `${streamed.head}|${streamed.digest.seal()}` : null;
    await this.database.writeOne(() => this.prepared().done.execute({ id: claimId, status, body: this.box.seal(body), headers: stored, bodyHash }));
  }

  /** periodic job: drop expired records */
  async purgeExpired(): Promise<number> {
    const { withTx, t } = this.database;
    const res = await withTx((tx) => tx.delete(t.idempotencyKeys).where(lt(t.idempotencyKeys.expiresAt, this.now())).returning({ id: t.idempotencyKeys.id }));
    return res.length;
  }
}
