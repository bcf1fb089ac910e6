import { createHmac, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { and, asc, desc, eq, gte, inArray, isNull, lt, lte, ne, or, sql } from 'drizzle-orm';
import type { Database, Db } from '../../db/client';
import type { SecretBox } from '../../lib/crypto';
import { dependencyDown } from '../../lib/dependency-down';
import { ApiError, validationError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { iso, pageOf } from '../../lib/schemas';
import type { Config } from '../../config';
import { endpointWants, envelopeOf, EVENT_TYPES, type EventService } from '../events/service';
import { postWebhook, RefusedAddressError, webhookDns } from './delivery-http';

type EndpointRow = Database['t']['webhookEndpoints']['$inferSelect'];
type DeliveryRow = Database['t']['webhookDeliveries']['$inferSelect'];

export const SECRET_PREFIX_LENGTH = 12;
const PREVIOUS_SECRET_TTL_MS = 24 * 3600_000;
/** how far back POST /v1/admin/webhooks/{id}/replay may reach (Stripe lists events of the last 30 days) */
export const REPLAY_WINDOW_DAYS = 30;

type Audit = (tx: Db, action: string, target: string, details?: Record<string, unknown>) => Promise<void>;

export const newSigningSecret = () => 'whsec_' + randomBytes(32).toString('base64');

/** Standard Webhooks v1 signature: base64 HMAC-SHA256 over "{id}.{timestamp}.{body}" with the decoded secret. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

export const endpointView = (e: EndpointRow) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  enabled_events: e.enabledEvents,
  signing_secret_prefix: e.secretPrefix,
  status: e.status as 'active' | 'disabled' | 'failed',
  consecutive_failures: e.consecutiveFailures,
  created_at: e.createdAt.toISOString(),
  last_success_at: iso(e.lastSuccessAt),
  last_failure_at: iso(e.lastFailureAt),
});

function privateV4(a: number, b: number, c: number): boolean {
  return (
    a === 0 || a === 10 || a === 127 || a >= 224 || // this network, private, loopback, multicast + reserved
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local (cloud metadata)
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // IETF protocol assignments, TEST-NET-1
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113)
  );
}

/** The 8 hextets of an IPv6 address (with an embedded dotted IPv4 tail), or null. */
function ipv6Hextets(ip: string): number[] | null {
  let s = ip.toLowerCase().split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + ((o[0]! << 8) | o[1]!).toString(16) + ':' + ((o[2]! << 8) | o[3]!).toString(16);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const parts = [...head, ...Array(fill).fill('0'), ...tail];
  if (parts.length !== 8 || parts.some((p) => !/^[0-9a-f]{1,4}$/.test(p))) return null;
  return parts.map((p) => parseInt(p, 16));
}

/**
 * True for every address a webhook must not reach: private, loopback, link-local, reserved and
 * multicast IPv4 and IPv6 — including IPv4 embedded in IPv6 (mapped ::ffff:0:0/96, compatible
 * ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16), which `new URL()` rewrites to hex hextets.
 */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) {
    const [a, b, c] = ip.split('.').map(Number) as [number, number, number];
    return privateV4(a, b, c);
  }
  const h = ipv6Hextets(ip);
  if (!h) return true; // unparseable: refuse
  const v4 = embeddedV4(h);
  // ::, ::1 and IPv4-compatible (deprecated) are never a public target
  if (v4) return compatibleV4(h) || privateV4(...v4);
  const first = h[0]!;
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xffc0) === 0xfec0 || (first & 0xff00) === 0xff00 || (first === 0x2001 && h[1] === 0xdb8);
}

/** ::/96 (and :: and ::1 with it) */
const compatibleV4 = (h: number[]) => h.slice(0, 6).every((x) => x === 0);

/** The first three octets of the IPv4 address an IPv6 one carries (mapped ::ffff:0:0/96, compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16), or null. */
function embeddedV4(h: number[]): [number, number, number] | null {
  const at = (i: number): [number, number, number] => [h[i]! >> 8, h[i]! & 0xff, h[i + 1]! >> 8];
  const zeros = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && h[5] === 0xffff) return at(6);
  if (compatibleV4(h)) return at(6);
  if (h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6)) return at(6);
  if (h[0] === 0x2002) return at(1);
  return null;
}

/**
 * Link-local addresses (169.254.0.0/16, fe80::/10; IPv4 ones embedded in IPv6 too) and the IPv6
 * cloud-metadata address: where instance metadata and its credentials answer. Refused even where
 * private targets are allowed (the sandbox's local receivers are loopback or private, never these).
 */
export function isLinkLocalAddress(ip: string): boolean {
  if (isIP(ip) === 4) return ip.startsWith('169.254.');
  const h = ipv6Hextets(ip);
  if (!h) return true;
  const v4 = embeddedV4(h);
  if (v4) return v4[0] === 169 && v4[1] === 254;
  return (h[0]! & 0xffc0) === 0xfe80 || (h[0] === 0xfd00 && h[1] === 0x0ec2 && h.slice(2, 7).every((x) => x === 0) && h[7] === 0x254);
}

/**
 * Live endpoints must be https and resolve only to public addresses (SSRF guard, checked again at
 * delivery time). Sandbox endpoints may be http; they may target private and loopback addresses
 * only when WEBHOOK_ALLOW_PRIVATE_TARGETS is on (the embedded sandbox's default).
 */
export async function checkWebhookUrl(url: string, env: string, allowPrivate = false): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must use https (or http in the sandbox)';
  if (u.username || u.password) return 'must not contain credentials';
  if (env === 'live' && u.protocol !== 'https:') return 'live endpoints must use https';
  // private and loopback targets allowed (the embedded sandbox): link-local never
  const privateAllowed = env !== 'live' && allowPrivate;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await webhookDns.lookupAll(host)).map((a) => a.address);
  } catch {
    // a local name that does not resolve yet is left to the check at delivery
    return privateAllowed ? null : 'host does not resolve';
  }
  if (privateAllowed) return addresses.some(isLinkLocalAddress) ? LINK_LOCAL_REFUSED : null;
  if (!addresses.length || addresses.some(isPrivateAddress)) return 'must resolve to a public address (private, loopback and link-local targets are refused)';
  return null;
}

const LINK_LOCAL_REFUSED = 'must not resolve to a link-local or cloud-metadata address (169.254.0.0/16, fe80::/10, fd00:ec2::254: where instance metadata answers)';

export function validateEvents(events: string[]): string | null {
  if (!events.length) return 'at least one event type, or ["*"]';
  if (events.includes('*') && events.length > 1) return '"*" must be the only entry';
  const unknown = events.filter((e) => e !== '*' && !(EVENT_TYPES as readonly string[]).includes(e));
  return unknown.length ? `unknown event type(s): ${unknown.join(', ')}` : null;
}

export interface WebhookScope {
  tenantId: string;
  env: string;
}

export class WebhookService {
  /** metrics hook */
  onAttempt: (outcome: 'succeeded' | 'failed' | 'retry') => void = () => {};
  /** an active endpoint has held deliveries to send (kicks its drain job) */
  onBacklog: (endpointId: string) => void = () => {};

  constructor(
    private readonly database: Database,
    private readonly box: SecretBox,
    private readonly events: EventService,
    private readonly config: Config,
    private readonly now: () => Date,
    private readonly log: Logger,
  ) {}

  private async checkInput(scope: WebhookScope, input: { url?: string; enabled_events?: string[] }) {
    const fields = [];
    if (input.url !== undefined) {
      const problem = await checkWebhookUrl(input.url, scope.env, this.config.webhookAllowPrivateTargets);
      if (problem) fields.push({ path: 'url', message: problem });
    }
    if (input.enabled_events !== undefined) {
      const problem = validateEvents(input.enabled_events);
      if (problem) fields.push({ path: 'enabled_events', message: problem });
    }
    if (fields.length) throw validationError(fields);
  }

  /** `locked`: read in the transaction `tx`, the row locked until it ends (PostgreSQL; SQLite's transaction holds the write lock) */
  async get(scope: WebhookScope, id: string, locked?: { tx: Db }): Promise<EndpointRow> {
    const w = this.database.t.webhookEndpoints;
    const read = (locked?.tx ?? this.database.db).select().from(w).where(and(eq(w.id, id), eq(w.tenantId, scope.tenantId), eq(w.env, scope.env)));
    const [row] = await (locked && this.database.dialect === 'postgres' ? read.for('update') : read);
    if (!row) throw new ApiError('resource_not_found', `No webhook endpoint ${id}.`);
    return row;
  }

  async list(scope: WebhookScope) {
    const w = this.database.t.webhookEndpoints;
    return this.database.db.select().from(w).where(and(eq(w.tenantId, scope.tenantId), eq(w.env, scope.env))).orderBy(w.createdAt);
  }

  async create(scope: WebhookScope, input: { url: string; description?: string | null; enabled_events: string[] }, audit: Audit) {
    await this.checkInput(scope, input);
    const secret = newSigningSecret();
    const id = crypto.randomUUID();
    const row = {
      id,
      tenantId: scope.tenantId,
      env: scope.env,
      url: input.url,
      description: input.description ?? null,
      enabledEvents: input.enabled_events,
      secretEnc: this.box.seal(secret),
      secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH),
      status: 'active',
      consecutiveFailures: 0,
      createdAt: this.now(),
    };
    await this.database.withTx(async (tx) => {
      await tx.insert(this.database.t.webhookEndpoints).values(row);
      await audit(tx, 'webhook.created', id, { url: row.url, description: row.description, enabled_events: row.enabledEvents });
    });
    return { ...endpointView({ ...row, previousSecretEnc: null, previousSecretExpiresAt: null, lastSuccessAt: null, lastFailureAt: null, failingSince: null }), signing_secret: secret };
  }

  async update(
    scope: WebhookScope,
    id: string,
    patch: { url?: string; description?: string | null; enabled_events?: string[]; status?: 'active' | 'disabled' },
    audit: Audit,
  ) {
    const before = await this.get(scope, id);
    await this.checkInput(scope, patch);
    const w = this.database.t.webhookEndpoints;
    const set: Partial<EndpointRow> = {};
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.enabled_events !== undefined) set.enabledEvents = patch.enabled_events;
    if (patch.status !== undefined) {
      set.status = patch.status;
      if (patch.status === 'active') {
        // re-enabling a failed endpoint starts afresh
        set.consecutiveFailures = 0;
        set.failingSince = null;
      }
    }
    const reEnabled = patch.status === 'active' && before.status !== 'active';
    const released = await this.database.withTx(async (tx) => {
      if (Object.keys(set).length) await tx.update(w).set(set).where(and(eq(w.id, id), eq(w.tenantId, scope.tenantId)));
      // disabling holds what is waiting; re-enabling puts what still waits for a retry behind the backlog too
      if (patch.status === 'disabled' || reEnabled) await this.holdPending(tx, id);
      // what the endpoint missed: its held deliveries, and the ones given up during the failure streak
      const n = reEnabled ? await this.releaseMissed(tx, before) : 0;
      // what changed, from and to: where a bank's events go is what a reviewer of the log looks for
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (set.url !== undefined && set.url !== before.url) changes.url = { from: before.url, to: set.url };
      if (set.description !== undefined && set.description !== before.description) changes.description = { from: before.description, to: set.description };
      if (set.enabledEvents !== undefined && JSON.stringify(set.enabledEvents) !== JSON.stringify(before.enabledEvents)) changes.enabled_events = { from: before.enabledEvents, to: set.enabledEvents };
      if (set.status !== undefined && set.status !== before.status) changes.status = { from: before.status, to: set.status };
      // (a PATCH that changes nothing is not an entry of the log)
      if (Object.keys(changes).length || reEnabled) await audit(tx, 'webhook.updated', id, { changes, ...(reEnabled ? { status: 'active', previous_status: before.status, deliveries_released: n } : {}) });
      return n;
    });
    if (reEnabled && released) this.onBacklog(id);
    return endpointView(await this.get(scope, id));
  }

  /** pending deliveries that are not in flight wait (held) while the endpoint is not active */
  private async holdPending(tx: Db, endpointId: string) {
    const d = this.database.t.webhookDeliveries;
    const now = this.now();
    await tx
      .update(d)
      .set({ status: 'held', nextAttemptAt: null, updatedAt: now })
      .where(and(eq(d.endpointId, endpointId), eq(d.status, 'pending'), or(isNull(d.lockedUntil), lt(d.lockedUntil, now))));
  }

  /**
   * On re-enabling: the deliveries given up since the endpoint's failure streak began are queued
   * again (held, attempts from zero) beside those already held. Returns how many are held now.
   */
  private async releaseMissed(tx: Db, ep: EndpointRow): Promise<number> {
    const d = this.database.t.webhookDeliveries;
    if (ep.failingSince)
      await tx
        .update(d)
        .set({ status: 'held', attempts: 0, nextAttemptAt: null, updatedAt: this.now() })
        .where(and(eq(d.endpointId, ep.id), eq(d.tenantId, ep.tenantId), eq(d.status, 'failed'), gte(d.updatedAt, ep.failingSince)));
    const held = await tx.select({ id: d.id }).from(d).where(and(eq(d.endpointId, ep.id), eq(d.status, 'held')));
    return held.length;
  }

  /**
   * POST /v1/admin/webhooks/{id}/replay?since=: every event at or after `since` (within the replay
   * window) that the endpoint had a delivery for is queued again, and subscribed events of that
   * period without a delivery (lost before deliveries were kept for every state) get one. They are
   * sent through the endpoint's drain, in event order, once it is active. Deliveries in flight are
   * left alone. Returns how many deliveries this call queued.
   */
  async replay(scope: WebhookScope, id: string, sinceText: string, audit: Audit) {
    const ep = await this.get(scope, id);
    const now = this.now();
    const since = new Date(sinceText);
    const oldest = new Date(now.getTime() - REPLAY_WINDOW_DAYS * 86_400_000);
    if (Number.isNaN(since.getTime())) throw validationError([{ path: 'query.since', message: 'must be an ISO 8601 date-time, e.g. 2026-11-22T10:00:00Z' }]);
    if (since < oldest) throw validationError([{ path: 'query.since', message: `must be within the last ${REPLAY_WINDOW_DAYS} days (not before ${oldest.toISOString()})` }]);
    if (since > now) throw validationError([{ path: 'query.since', message: 'must not be in the future' }]);
    const { t } = this.database;
    const d = t.webhookDeliveries;
    const ev = t.events;
    const count = await this.database.withTx(async (tx) => {
      const inWindow = tx
        .select({ id: ev.id })
        .from(ev)
        .where(and(eq(ev.tenantId, scope.tenantId), eq(ev.env, scope.env), gte(ev.createdAt, since)));
      const requeued = await tx
        .update(d)
        .set({ status: 'held', attempts: 0, nextAttemptAt: null, lockedUntil: null, updatedAt: now })
        .where(
          and(
            eq(d.endpointId, id),
            eq(d.tenantId, scope.tenantId),
            ne(d.status, 'held'),
            or(ne(d.status, 'pending'), isNull(d.lockedUntil), lt(d.lockedUntil, now)),
            inArray(d.eventId, inWindow),
          ),
        )
        .returning({ id: d.id });
      // subscribed events of the window that never got a delivery to this endpoint
      const have = new Set((await tx.select({ e: d.eventId }).from(d).where(and(eq(d.endpointId, id), inArray(d.eventId, inWindow)))).map((r) => r.e));
      const from = since > ep.createdAt ? since : ep.createdAt;
      const candidates = await tx
        .select({ id: ev.id, type: ev.type })
        .from(ev)
        .where(and(eq(ev.tenantId, scope.tenantId), eq(ev.env, scope.env), gte(ev.createdAt, from), ne(ev.type, 'webhook.test')))
        .orderBy(asc(ev.id));
      let added = 0;
      for (const c of candidates) {
        if (have.has(c.id) || !endpointWants(ep.enabledEvents, c.type)) continue;
        const rows = await tx
          .insert(d)
          .values({ id: crypto.randomUUID(), tenantId: scope.tenantId, eventId: c.id, endpointId: id, status: 'held', attempts: 0, nextAttemptAt: null, createdAt: now, updatedAt: now })
          .onConflictDoNothing()
          .returning({ id: d.id });
        added += rows.length;
      }
      const n = requeued.length + added;
      await audit(tx, 'webhook.replayed', id, { since: since.toISOString(), deliveries: n });
      return n;
    });
    if (count && ep.status === 'active') this.onBacklog(id);
    return { endpoint_id: id, since: since.toISOString(), replayed: count, endpoint_status: ep.status as 'active' | 'disabled' | 'failed' };
  }

  /**
   * POST /v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry: the delivery is attempted again now,
   * with a fresh retry schedule, whatever its state (a succeeded one is re-sent, as Stripe's and
   * Svix's resend do). Refused while an attempt of it is in flight, or while the endpoint is not active.
   */
  async retryDelivery(scope: WebhookScope, endpointId: string, deliveryId: string, audit: Audit) {
    const ep = await this.get(scope, endpointId);
    const d = this.database.t.webhookDeliveries;
    const mine = and(eq(d.id, deliveryId), eq(d.endpointId, endpointId), eq(d.tenantId, scope.tenantId));
    const [row] = await this.database.db.select().from(d).where(mine);
    if (!row) throw new ApiError('resource_not_found', `No delivery ${deliveryId} for webhook endpoint ${endpointId}.`);
    if (ep.status !== 'active')
      throw new ApiError('webhook_endpoint_inactive', `The endpoint is ${ep.status}; re-enable it with PATCH {"status":"active"} first (its held deliveries are then sent in order).`);
    const now = this.now();
    const inFlight = () => new ApiError('webhook_delivery_in_flight', 'An attempt of this delivery is in flight; retry after it ends (see GET …/deliveries).');
    if (row.status === 'pending' && row.lockedUntil && row.lockedUntil >= now) throw inFlight();
    const updated = await this.database.withTx(async (tx) => {
      const rows = await tx
        .update(d)
        .set({ status: 'pending', attempts: 0, nextAttemptAt: now, lockedUntil: null, updatedAt: now })
        .where(and(mine, or(ne(d.status, 'pending'), isNull(d.lockedUntil), lt(d.lockedUntil, now))))
        .returning({ id: d.id });
      if (rows.length) await audit(tx, 'webhook.delivery_retried', endpointId, { delivery_id: deliveryId, event_id: row.eventId, previous_status: row.status });
      return rows.length;
    });
    if (!updated) throw inFlight();
    return { delivery_id: deliveryId, event_id: row.eventId, status: 'pending' as const };
  }

  async remove(scope: WebhookScope, id: string, audit: Audit) {
    const ep = await this.get(scope, id);
    const { t } = this.database;
    await this.database.withTx(async (tx) => {
      await tx.delete(t.webhookDeliveries).where(and(eq(t.webhookDeliveries.endpointId, id), eq(t.webhookDeliveries.tenantId, scope.tenantId)));
      await tx.delete(t.webhookEndpoints).where(and(eq(t.webhookEndpoints.id, id), eq(t.webhookEndpoints.tenantId, scope.tenantId)));
      await audit(tx, 'webhook.deleted', id, { url: ep.url, enabled_events: ep.enabledEvents, status: ep.status });
    });
    return { id, deleted: true };
  }

  /**
   * A new secret; the one it replaces is still signed with for PREVIOUS_SECRET_TTL_MS. One earlier
   * secret is kept, so a secret still in its grace from an earlier rotation ends now: said in the
   * answer (`ended_secret_prefix`) and the audit log, as a rotation after a leak means it to.
   */
  async rotateSecret(scope: WebhookScope, id: string, audit: Audit) {
    const secret = newSigningSecret();
    const w = this.database.t.webhookEndpoints;
    // the endpoint read in the rotating transaction, its row locked (SQLite: the write lock of the
    // transaction): two rotations at once would each keep the same previous secret, and the first
    // one's new secret would end at once without either answer saying so
    const done = await this.database.withTx(async (tx) => {
      const ep = await this.get(scope, id, { tx });
      const now = this.now();
      const previousExpires = new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS);
      const ended = ep.previousSecretEnc && ep.previousSecretExpiresAt && ep.previousSecretExpiresAt > now ? this.box.open(ep.previousSecretEnc).slice(0, SECRET_PREFIX_LENGTH) : null;
      const [row] = await tx
        .update(w)
        .set({ secretEnc: this.box.seal(secret), secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH), previousSecretEnc: ep.secretEnc, previousSecretExpiresAt: previousExpires })
        .where(eq(w.id, id))
        .returning();
      await audit(tx, 'webhook.secret_rotated', id, { signing_secret_prefix: secret.slice(0, SECRET_PREFIX_LENGTH), previous_secret_prefix: ep.secretPrefix, previous_secret_expires_at: previousExpires.toISOString(), ended_secret_prefix: ended });
      return { row: row!, previous: ep.secretPrefix, previousExpires, ended };
    });
    // the endpoint as this rotation left it (read again after it, another rotation's secret could show)
    return { ...endpointView(done.row), signing_secret: secret, previous_secret_prefix: done.previous, previous_secret_expires_at: done.previousExpires.toISOString(), ended_secret_prefix: done.ended };
  }

  /** webhook.test: an event delivered to this endpoint only. */
  async sendTest(scope: WebhookScope, id: string) {
    const ep = await this.get(scope, id);
    if (ep.status !== 'active')
      throw new ApiError('webhook_endpoint_inactive', `The endpoint is ${ep.status}; re-enable it with PATCH {"status":"active"} first.`);
    const { t } = this.database;
    const deliveryId = crypto.randomUUID();
    const now = this.now();
    const eventId = await this.database.withTx(async (tx) => {
      const evId = await this.events.emit(tx, { tenantId: scope.tenantId, env: scope.env, type: 'webhook.test', data: { endpoint_id: id, message: 'This is a test event.' } });
      await tx.update(t.events).set({ dispatchedAt: now }).where(eq(t.events.id, evId));
      await tx.insert(t.webhookDeliveries).values({ id: deliveryId, tenantId: scope.tenantId, eventId: evId, endpointId: id, status: 'pending', attempts: 0, nextAttemptAt: now, createdAt: now, updatedAt: now });
      return evId;
    });
    return { event_id: eventId, delivery_id: deliveryId };
  }

  async deliveries(scope: WebhookScope, endpointId: string, opts: { limit: number; cursor?: string }) {
    await this.get(scope, endpointId);
    const { t } = this.database;
    const d = t.webhookDeliveries;
    const conds = [eq(d.endpointId, endpointId), eq(d.tenantId, scope.tenantId)];
    if (opts.cursor) conds.push(lt(d.eventId, opts.cursor));
    const rows = await this.database.db
      .select({ d, type: t.events.type })
      .from(d)
      .innerJoin(t.events, eq(t.events.id, d.eventId))
      .where(and(...conds))
      .orderBy(desc(d.eventId))
      .limit(opts.limit + 1);
    return pageOf(
      rows,
      opts.limit,
      ({ d: r, type }) => ({
        id: r.id,
        event_id: r.eventId,
        event_type: type,
        status: r.status as 'held' | 'pending' | 'succeeded' | 'failed',
        attempts: r.attempts,
        last_status_code: r.lastStatusCode,
        last_error: r.lastError,
        next_attempt_at: iso(r.nextAttemptAt),
        created_at: r.createdAt.toISOString(),
        updated_at: r.updatedAt.toISOString(),
      }),
      (row) => row.d.eventId,
    );
  }

  // ---- delivery -------------------------------------------------------------------------------

  private lockMs() {
    return this.config.webhookTimeoutMs + 5_000;
  }

  /** Deliveries that are due and not locked by a live attempt (recovery after a crash). */
  async dueDeliveries(limit = 500): Promise<string[]> {
    const d = this.database.t.webhookDeliveries;
    const now = this.now();
    const rows = await this.database.db
      .select({ id: d.id })
      .from(d)
      .where(and(eq(d.status, 'pending'), lte(d.nextAttemptAt, now), or(isNull(d.lockedUntil), lt(d.lockedUntil, now))))
      .limit(limit);
    return rows.map((r) => r.id);
  }

  /**
   * One delivery attempt. Claims the row (conditional update of locked_until) so that concurrent
   * workers never send the same attempt twice; returns the delay before the next attempt, if any.
   */
  async attempt(deliveryId: string): Promise<{ retryInMs: number } | null> {
    const { t } = this.database;
    const d = t.webhookDeliveries;
    const now = this.now();
    const claimed = await this.database.withTx((tx) =>
      tx
        .update(d)
        .set({ lockedUntil: new Date(now.getTime() + this.lockMs()) })
        .where(and(eq(d.id, deliveryId), eq(d.status, 'pending'), lte(d.nextAttemptAt, now), or(isNull(d.lockedUntil), lt(d.lockedUntil, now))))
        .returning(),
    );
    const delivery = claimed[0];
    if (!delivery) return null;
    return this.send(delivery);
  }

  /**
   * The next delivery of an active endpoint's backlog, in event order: the oldest held one, claimed
   * and attempted, only while no other delivery of the endpoint is pending (one at a time, so the
   * receiver gets them in order; a failed attempt pauses the backlog until that delivery succeeds or
   * is given up by its retry schedule). Returns null when there is nothing to send now.
   */
  async drainNext(endpointId: string): Promise<{ deliveryId: string; retryInMs: number | null } | null> {
    const { t } = this.database;
    const d = t.webhookDeliveries;
    const e = t.webhookEndpoints;
    const now = this.now();
    const claimed = await this.database.withTx(async (tx) => {
      // a no-op update takes the endpoint's row lock (PostgreSQL): drains of one endpoint run one at a time
      const active = await tx.update(e).set({ consecutiveFailures: sql`${e.consecutiveFailures}` }).where(and(eq(e.id, endpointId), eq(e.status, 'active'))).returning({ id: e.id });
      if (!active.length) return null;
      const busy = await tx.select({ id: d.id }).from(d).where(and(eq(d.endpointId, endpointId), eq(d.status, 'pending'))).limit(1);
      if (busy.length) return null;
      const [next] = await tx.select({ id: d.id }).from(d).where(and(eq(d.endpointId, endpointId), eq(d.status, 'held'))).orderBy(asc(d.eventId)).limit(1);
      if (!next) return null;
      const rows = await tx
        .update(d)
        .set({ status: 'pending', nextAttemptAt: now, lockedUntil: new Date(now.getTime() + this.lockMs()), updatedAt: now })
        .where(and(eq(d.id, next.id), eq(d.status, 'held')))
        .returning();
      return rows[0] ?? null;
    });
    if (!claimed) return null;
    const res = await this.send(claimed);
    return { deliveryId: claimed.id, retryInMs: res?.retryInMs ?? null };
  }

  /** Active endpoints with held deliveries and none pending: their drain can run (recovery sweep). */
  async drainableEndpoints(limit = 500): Promise<string[]> {
    const { t } = this.database;
    const d = t.webhookDeliveries;
    const e = t.webhookEndpoints;
    const rows = await this.database.db
      .selectDistinct({ id: d.endpointId })
      .from(d)
      .innerJoin(e, eq(e.id, d.endpointId))
      .where(and(eq(d.status, 'held'), eq(e.status, 'active')))
      .limit(limit);
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    const busy = new Set(
      (await this.database.db.selectDistinct({ id: d.endpointId }).from(d).where(and(eq(d.status, 'pending'), inArray(d.endpointId, ids)))).map((r) => r.id),
    );
    return ids.filter((id) => !busy.has(id));
  }

  /**
   * Sends one claimed (pending, locked) delivery and records the outcome. An attempt cut short by
   * an outage of the database gives its claim back, uncounted, so the sweep tries it again within
   * about a second instead of after its lock (the webhook timeout + 5 s), which would also hold
   * the endpoint's backlog that long; if the outage lasts, the lock's expiry is the backstop.
   * A POST already sent may then be sent again: receivers dedupe by webhook-id.
   */
  private async send(delivery: DeliveryRow): Promise<{ retryInMs: number } | null> {
    try {
      return await this.sendClaimed(delivery);
    } catch (err) {
      if (dependencyDown(err) && delivery.lockedUntil) {
        const d = this.database.t.webhookDeliveries;
        await this.database
          .withTx((tx) => tx.update(d).set({ lockedUntil: null }).where(and(eq(d.id, delivery.id), eq(d.status, 'pending'), eq(d.lockedUntil, delivery.lockedUntil!))))
          .catch(() => {});
      }
      throw err;
    }
  }

  private async sendClaimed(delivery: DeliveryRow): Promise<{ retryInMs: number } | null> {
    const { t } = this.database;
    const d = t.webhookDeliveries;
    const deliveryId = delivery.id;
    const [event] = await this.database.db.select().from(t.events).where(eq(t.events.id, delivery.eventId));
    const [endpoint] = await this.database.db.select().from(t.webhookEndpoints).where(eq(t.webhookEndpoints.id, delivery.endpointId));
    if (!event || !endpoint) {
      await this.database.withTx((tx) => tx.update(d).set({ status: 'failed', lastError: 'event or endpoint deleted', lockedUntil: null, nextAttemptAt: null, updatedAt: this.now() }).where(eq(d.id, deliveryId)));
      return null;
    }
    if (endpoint.status !== 'active') {
      // not lost: it waits for the endpoint to be re-enabled (then sent in event order)
      await this.database.withTx((tx) => tx.update(d).set({ status: 'held', lockedUntil: null, nextAttemptAt: null, updatedAt: this.now() }).where(eq(d.id, deliveryId)));
      return null;
    }
    const body = JSON.stringify(envelopeOf(event));
    const timestamp = Math.floor(this.now().getTime() / 1000);
    const signatures = [sign(this.box.open(endpoint.secretEnc), event.id, timestamp, body)];
    if (endpoint.previousSecretEnc && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > this.now())
      signatures.push(sign(this.box.open(endpoint.previousSecretEnc), event.id, timestamp, body));

    let status: number | null = null;
    let error: string | null = null;
    const publicOnly = endpoint.env === 'live' || !this.config.webhookAllowPrivateTargets;
    const urlProblem = publicOnly ? await checkWebhookUrl(endpoint.url, endpoint.env, this.config.webhookAllowPrivateTargets) : null;
    if (urlProblem) error = `refused: ${urlProblem}`;
    else {
      try {
        status = await postWebhook(endpoint.url, {
          headers: {
            'content-type': 'application/json',
            'user-agent': 'pt-credit-esg-webhooks/1.0',
            'webhook-id': event.id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signatures.join(' '),
          },
          body,
          timeoutMs: this.config.webhookTimeoutMs,
          // the connection goes only to addresses checked for it (no DNS rebinding after the check above)
          allowedAddress: publicOnly ? (ip) => !isPrivateAddress(ip) : (ip) => !isLinkLocalAddress(ip),
        });
        if (status < 200 || status >= 300) error = `HTTP ${status}`;
      } catch (err) {
        if (err instanceof RefusedAddressError) error = `refused: ${err.message}`;
        else error = (err as Error).name === 'TimeoutError' ? 'timeout' : `network error: ${(err as Error).message}`;
      }
    }
    const attempts = delivery.attempts + 1;
    const done = this.now();
    const e = t.webhookEndpoints;
    if (!error) {
      await this.database.withTx(async (tx) => {
        await tx.update(d).set({ status: 'succeeded', attempts, lastStatusCode: status, lastError: null, lockedUntil: null, nextAttemptAt: null, updatedAt: done }).where(eq(d.id, deliveryId));
        await tx.update(e).set({ consecutiveFailures: 0, failingSince: null, lastSuccessAt: done }).where(eq(e.id, endpoint.id));
      });
      this.onAttempt('succeeded');
      return null;
    }
    const delays = this.config.webhookRetryDelaysMs;
    const retryInMs = attempts <= delays.length ? delays[attempts - 1]! : null;
    let disabled = false;
    await this.database.withTx(async (tx) => {
      await tx
        .update(d)
        .set({
          status: retryInMs === null ? 'failed' : 'pending',
          attempts,
          lastStatusCode: status,
          lastError: error,
          lockedUntil: null,
          nextAttemptAt: retryInMs === null ? null : new Date(done.getTime() + retryInMs),
          updatedAt: done,
        })
        .where(eq(d.id, deliveryId));
      // counted in one statement (it takes the row lock): concurrent failures are never lost (PostgreSQL)
      const [fresh] = await tx
        .update(e)
        .set({ consecutiveFailures: sql`${e.consecutiveFailures} + 1`, lastFailureAt: done })
        .where(eq(e.id, endpoint.id))
        .returning({ n: e.consecutiveFailures, since: e.failingSince, status: e.status });
      if (!fresh) return;
      const failingSince = fresh.n === 1 || !fresh.since ? done : fresh.since;
      // disabled only by failures spread over time: the threshold AND a streak at least WEBHOOK_DISABLE_AFTER_MS old
      disabled = fresh.status === 'active' && fresh.n >= this.config.webhookFailureThreshold && done.getTime() - failingSince.getTime() >= this.config.webhookDisableAfterMs;
      await tx
        .update(e)
        .set({ failingSince, ...(disabled ? { status: 'failed' } : {}) })
        .where(eq(e.id, endpoint.id));
      if (disabled) await this.holdPending(tx, endpoint.id);
    });
    if (disabled) this.log.warn('webhook endpoint disabled after consecutive failures', { endpointId: endpoint.id, failures: this.config.webhookFailureThreshold });
    this.onAttempt(retryInMs === null ? 'failed' : 'retry');
    this.log.info('webhook delivery failed', { deliveryId, endpointId: endpoint.id, attempts, error, retryInMs });
    return retryInMs === null || disabled ? null : { retryInMs };
  }
}
