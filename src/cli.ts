import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { and, asc, eq, like } from 'drizzle-orm';
import Redis from 'ioredis';
import postgres from 'postgres';
import { ConfigError, loadConfig, type Config } from './config';
import { openDatabase, type Database } from './db/client';
import { announceTenantChanges } from './lib/cache-generations';
import { ENVS, keyStatus, PLANS, SCOPES, TenantService, type Env, type Plan } from './features/tenants/service';
import { AdminService, operatorActor } from './features/admin/service';
import { eraseTenantAsOperator } from './features/gdpr/service';

/**
 * Operator CLI: same configuration (environment) as the server. `bun run cli help` lists commands;
 * the single binary runs it as `pt-api cli …`.
 */
const USAGE = `usage: bun run cli <command> [options]      (single binary: pt-api cli <command> [options])

  tenant create --name N [--plan free|starter|growth|enterprise] [--env sandbox|live]
                [--scopes a,b] [--daily-quota N] [--rate-limit N]
  tenant list
  tenant suspend --tenant ID
  tenant resume  --tenant ID
  tenant quota   --tenant ID [--daily-quota N] [--rate-limit N] [--plan P]
  tenant erase   --tenant ID [--confirm]
  key create     --tenant ID --env sandbox|live [--name N] [--scopes a,b] [--rate-limit N]
  key list       --tenant ID [--env sandbox|live]
  key revoke     --key ID [--reason TEXT] [--force]
  aml load       --source un|eu --file PATH_OR_URL

  --json         machine-readable output (one JSON value on stdout)
  --create       create the database if it does not exist yet (otherwise refused)

  --rate-limit on a tenant is its negotiated per-minute limit (enterprise plan);
  on a key it overrides the plan's limit for that key.
  key revoke refuses a tenant's last active key unless --force.
  tenant erase is the GDPR erasure of the whole tenant (both environments; irreversible, as
  POST /v1/admin/gdpr/erase with a live key): without --confirm it only shows what it would
  erase and exits 2.
  aml load loads a sanctions list file (the UN consolidated XML or the EU FSF XML 1.1) as the
  list's new active version and prints its counts; a file that does not parse changes nothing
  (the previous version stays active) and exits 1.
  Scopes: ${SCOPES.join(', ')}
  Give it the service's environment (DATA_DIR or DATABASE_URL, REDIS_URL, …): the database it
  uses is printed on stderr. Exit status: 0 done, 1 failed, 2 bad usage or no such database,
  3 (PostgreSQL) saved but not announced to the running processes (Redis unreachable).`;

class UsageError extends Error {}

function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${name} must be a positive integer (got "${v}")`);
  return Number(v);
}
function oneOf<T extends string>(name: string, v: string | undefined, allowed: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if (!allowed.includes(v as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')} (got "${v}")`);
  return v as T;
}
function scopes(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (!list.length || bad.length) throw new UsageError(`--scopes: unknown scope(s) ${bad.join(', ') || '(empty)'}; allowed: ${SCOPES.join(', ')}`);
  return list;
}
function required(name: string, v: string | undefined): string {
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

/** A database URL without its password, to say which database was used. */
function describeUrl(url: string) {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/**
 * Which database the configuration points at, and whether it exists yet (SQLite: the file;
 * PostgreSQL: the service's tables). A CLI started without the service's environment would
 * otherwise quietly create an empty database of its own (./data).
 */
async function locateDatabase(config: Config): Promise<{ description: string; exists: boolean }> {
  if (config.databaseUrl) {
    const sql = postgres(config.databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      const [row] = await sql<{ t: string | null }[]>`select to_regclass('tenants')::text as t`;
      return { description: `PostgreSQL ${describeUrl(config.databaseUrl)}`, exists: !!row?.t };
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
  if (config.dataDir === ':memory:') throw new UsageError('DATA_DIR=:memory: is a database of one process; the CLI needs the service\'s DATA_DIR or DATABASE_URL');
  const file = join(resolve(config.dataDir), 'service.sqlite');
  return { description: `SQLite ${file}`, exists: existsSync(file) };
}

const COMMANDS = ['tenant create', 'tenant list', 'tenant suspend', 'tenant resume', 'tenant quota', 'tenant erase', 'key create', 'key list', 'key revoke', 'aml load'] as const;
type Command = (typeof COMMANDS)[number];

/** Runs one CLI command; returns the exit status. */
export async function cliMain(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  try {
    return await run(argv, env);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    console.error(`error: ${(err as Error).message}`);
    return 1;
  }
}

async function run(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      env: { type: 'string' },
      scopes: { type: 'string' },
      tenant: { type: 'string' },
      key: { type: 'string' },
      reason: { type: 'string' },
      'rate-limit': { type: 'string' },
      'daily-quota': { type: 'string' },
      json: { type: 'boolean' },
      create: { type: 'boolean' },
      force: { type: 'boolean' },
      confirm: { type: 'boolean' },
      source: { type: 'string' },
      file: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const [noun, verb, ...rest] = positionals;
  if (values.help || noun === 'help') {
    console.log(USAGE);
    return 0;
  }
  // no command at all is a mistake of the caller (a script), not a request for help: usage on stderr, exit 2
  if (!noun) throw new UsageError('a command is required');
  if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const command = `${noun} ${verb ?? ''}`.trim() as Command;
  if (!COMMANDS.includes(command)) throw new UsageError(`unknown command "${command}"`);

  // validate every argument before touching the database
  const plan = oneOf<Plan>('plan', values.plan, PLANS);
  const keyEnv = oneOf<Env>('env', values.env, ENVS);
  const scopeList = scopes(values.scopes);
  const rateLimit = positiveInt('rate-limit', values['rate-limit']);
  const dailyQuota = positiveInt('daily-quota', values['daily-quota']);
  if (command === 'tenant create') required('name', values.name);
  if (['tenant suspend', 'tenant resume', 'tenant quota', 'tenant erase', 'key create', 'key list'].includes(command)) required('tenant', values.tenant);
  if (command === 'key create') required('env', values.env);
  if (command === 'key revoke') required('key', values.key);
  if (command === 'aml load') {
    required('source', values.source);
    required('file', values.file);
    oneOf('source', values.source, ['un', 'eu'] as const);
  }
  if (command === 'tenant quota' && dailyQuota === undefined && rateLimit === undefined && plan === undefined) throw new UsageError('give --daily-quota, --rate-limit and/or --plan');
  if (values.reason !== undefined && values.reason.length > 256) throw new UsageError('--reason must be at most 256 characters');

  const config = loadConfig(env);
  const located = await locateDatabase(config);
  console.error(`database: ${located.description}`);
  if (!located.exists && !values.create) {
    console.error(
      `error: no database there yet. Run the CLI with the service's environment (DATA_DIR or DATABASE_URL), ` +
        `or pass --create to create a new, empty database.`,
    );
    return 2;
  }

  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  // on PostgreSQL with Redis, the running processes cache tenants and keys: a change made here is
  // announced to them (SQLite's caches see every commit by themselves)
  const redis = config.redisUrl && config.databaseUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000, enableOfflineQueue: false, lazyConnect: true }) : null;
  let unannounced = false;
  if (redis) {
    redis.on('error', () => {}); // reported below if a change could not be announced
    await redis.connect().catch(() => {});
    const announce = announceTenantChanges(redis, config.redisPrefix, { throttled: () => {} });
    database.tenantsChanged = async (touched) => {
      if (!(await announce(touched))) unannounced = true;
    };
  }
  const out = (obj: unknown, human: string) => console.log(values.json ? JSON.stringify(obj) : human);
  let status = 0;
  try {
    status = (await execute(command, database, config, out, { values, plan, keyEnv, scopeList, rateLimit, dailyQuota })) ?? 0;
  } finally {
    await database.close();
    redis?.disconnect();
  }
  if (unannounced) {
    console.error('warning: the change is saved, but Redis could not be reached to tell the running processes; they apply it within 10 s');
    return 3;
  }
  return status;
}

type Parsed = {
  values: Record<string, string | boolean | undefined>;
  plan?: Plan;
  keyEnv?: Env;
  scopeList?: string[];
  rateLimit?: number;
  dailyQuota?: number;
};

async function execute(command: Command, database: Database, config: Config, out: (obj: unknown, human: string) => void, a: Parsed): Promise<number | void> {
  const now = () => new Date();
  const tenants = new TenantService(database, now, config.defaultDailyQuota);
  const str = (k: string) => a.values[k] as string;
  const { t, db } = database;
  const admin = new AdminService(database, tenants, now);
  /** an operator's change and its audit record (actor "operator"), in one transaction */
  const audited = <T>(tenantOf: (r: T) => string, env: string, action: string, target: (r: T) => string, details: (r: T) => Record<string, unknown>, change: () => Promise<T>) =>
    database.withTx(async (tx) => {
      const r = await change();
      await admin.audit(tx, operatorActor(tenantOf(r), env), action, target(r), details(r));
      return r;
    });
  switch (command) {
    case 'tenant create': {
      const r = await audited((x) => x.tenant_id, a.keyEnv ?? 'sandbox', 'tenant.created', (x) => x.tenant_id, (x) => ({ plan: a.plan ?? null, first_key_id: x.api_key_id }), () =>
        tenants.createTenant({ name: str('name'), plan: a.plan, env: a.keyEnv, scopes: a.scopeList, dailyQuota: a.dailyQuota, rateLimitPerMinute: a.rateLimit }),
      );
      return out(r, `tenant ${r.tenant_id} created\napi key ${r.api_key_id}: ${r.api_key}\n(store the key now: it is not shown again)`);
    }
    case 'tenant list': {
      const rows = await db.select().from(t.tenants).orderBy(asc(t.tenants.createdAt), asc(t.tenants.id));
      // API keys only: an OAuth client's principal row (prefix oc_) is not a key (GET /v1/admin/keys agrees)
      const keys = await db.select({ tenantId: t.apiKeys.tenantId, env: t.apiKeys.env, revokedAt: t.apiKeys.revokedAt, expiresAt: t.apiKeys.expiresAt }).from(t.apiKeys).where(like(t.apiKeys.keyPrefix, 'sk_%'));
      const list = rows.map((r) => {
        const active = keys.filter((k) => k.tenantId === r.id && keyStatus(k, now()) === 'active');
        return {
          tenant_id: r.id,
          name: r.name,
          plan: r.plan,
          status: r.status,
          daily_quota: r.dailyQuota,
          rate_limit_per_minute: r.rateLimitPerMinute,
          active_keys: { sandbox: active.filter((k) => k.env === 'sandbox').length, live: active.filter((k) => k.env === 'live').length },
          created_at: r.createdAt.toISOString(),
        };
      });
      return out(
        list,
        list.length
          ? list.map((r) => `${r.tenant_id}  ${r.status.padEnd(10)} ${r.plan.padEnd(10)} keys ${r.active_keys.sandbox} sandbox / ${r.active_keys.live} live  ${r.name}`).join('\n')
          : '(no tenants)',
      );
    }
    case 'key create': {
      const r = await audited(() => str('tenant'), a.keyEnv!, 'api_key.created', (x) => x.api_key_id, () => ({ scopes: a.scopeList ?? ['*'], rate_limit_per_minute: a.rateLimit ?? null }), () =>
        tenants.createKey({ tenantId: str('tenant'), env: a.keyEnv!, name: str('name'), scopes: a.scopeList, rateLimitPerMinute: a.rateLimit }),
      );
      return out(r, `api key ${r.api_key_id}: ${r.api_key}\n(store the key now: it is not shown again)`);
    }
    case 'key list': {
      const tenantId = str('tenant');
      const [tenant] = await db.select({ id: t.tenants.id }).from(t.tenants).where(eq(t.tenants.id, tenantId));
      if (!tenant) throw new Error(`unknown tenant ${tenantId}`);
      const k = t.apiKeys;
      const rows = await db.select().from(k).where(and(eq(k.tenantId, tenantId), like(k.keyPrefix, 'sk_%'), a.keyEnv ? eq(k.env, a.keyEnv) : undefined)).orderBy(asc(k.createdAt), asc(k.id));
      const iso = (d: Date | null) => d?.toISOString() ?? null;
      const list = rows.map((r) => ({
        api_key_id: r.id,
        env: r.env,
        name: r.name,
        key_prefix: r.keyPrefix,
        status: keyStatus(r, now()),
        scopes: r.scopes,
        rate_limit_per_minute: r.rateLimitPerMinute,
        created_at: r.createdAt.toISOString(),
        last_used_at: iso(r.lastUsedAt),
        expires_at: iso(r.expiresAt),
        revoked_at: iso(r.revokedAt),
      }));
      return out(list, list.length ? list.map((r) => `${r.api_key_id}  ${r.env.padEnd(7)} ${r.status.padEnd(7)} ${r.key_prefix}…  ${r.name}  [${r.scopes.join(',')}]`).join('\n') : '(no keys)');
    }
    case 'key revoke': {
      const keyId = str('key');
      const [key] = await db.select({ tenantId: t.apiKeys.tenantId, env: t.apiKeys.env }).from(t.apiKeys).where(eq(t.apiKeys.id, keyId));
      if (!key) throw new Error(`unknown key ${keyId}`);
      try {
        const r = await admin.revoke(operatorActor(key.tenantId, key.env), null, keyId, (a.values.reason as string | undefined) ?? null, { allowLast: !!a.values.force });
        return out(r, `api key ${r.api_key_id} revoked at ${r.revoked_at}`);
      } catch (err) {
        if ((err as { code?: string }).code === 'last_active_key') throw new Error(`key ${keyId} is the tenant's last active key; pass --force to revoke it anyway`);
        throw err;
      }
    }
    case 'aml load': {
      const { AmlService } = await import('./features/aml/service');
      const { openListSource } = await import('./features/aml');
      const usage = { record() {} } as unknown as ConstructorParameters<typeof AmlService>[1];
      const { EventService } = await import('./features/events/service');
      // aml.alert events of monitored subjects go to the outbox; the running service delivers them
      const r = await new AmlService(database, usage, now, new EventService(database, now)).loadList(str('source') as 'un' | 'eu', await openListSource(str('file')), str('file'));
      return out(r, `${r.list} list generated ${r.generated_at} loaded as version ${r.version_id}: ${r.entries} entries (${r.persons} persons, ${r.organisations} organisations), ${r.names} names; ${r.monitoring.rescreened} monitored subjects screened again, ${r.monitoring.alerts} alerts`);
    }
    case 'tenant erase': {
      const tenantId = str('tenant');
      const [tenant] = await db.select().from(t.tenants).where(eq(t.tenants.id, tenantId));
      if (!tenant) throw new Error(`unknown tenant ${tenantId}`);
      if (tenant.status === 'terminated') throw new Error(`tenant ${tenantId} is already erased (terminated at ${tenant.terminatedAt?.toISOString() ?? '?'})`);
      if (!a.values.confirm) {
        const keys = await db.select({ env: t.apiKeys.env, revokedAt: t.apiKeys.revokedAt, expiresAt: t.apiKeys.expiresAt }).from(t.apiKeys).where(and(eq(t.apiKeys.tenantId, tenantId), like(t.apiKeys.keyPrefix, 'sk_%')));
        const active = keys.filter((k) => keyStatus(k, now()) === 'active');
        const preview = {
          tenant_id: tenantId,
          name: tenant.name,
          status: tenant.status,
          active_keys: { sandbox: active.filter((k) => k.env === 'sandbox').length, live: active.filter((k) => k.env === 'live').length },
          erased: false,
        };
        out(preview, `tenant ${tenantId} (${tenant.name}, ${tenant.status}): ${preview.active_keys.sandbox} sandbox and ${preview.active_keys.live} live active keys`);
        console.error('not erased: this erases the tenant in both environments and cannot be undone (docs/gdpr.md). Run again with --confirm to erase.');
        return 2;
      }
      const r = await eraseTenantAsOperator(database, tenants, tenantId, now);
      return out(
        r,
        `tenant ${tenantId} erased at ${r.completed_at}: ${r.redacted_api_keys} keys revoked, personal data anonymised, ` +
          `records kept until ${r.retained_under_legal_basis.retain_until} under ${r.retained_under_legal_basis.law}`,
      );
    }
    case 'tenant suspend':
    case 'tenant resume': {
      const status = command === 'tenant suspend' ? 'suspended' : 'active';
      await audited(() => str('tenant'), 'live', `tenant.${status === 'active' ? 'resumed' : 'suspended'}`, () => str('tenant'), () => ({}), () => tenants.setStatus(str('tenant'), status));
      return out({ tenant_id: str('tenant'), status }, `tenant ${str('tenant')} is ${status}`);
    }
    case 'tenant quota': {
      await audited(() => str('tenant'), 'live', 'tenant.quota_changed', () => str('tenant'), () => ({ daily_quota: a.dailyQuota ?? null, rate_limit_per_minute: a.rateLimit ?? null, plan: a.plan ?? null }), () =>
        tenants.setQuota(str('tenant'), { dailyQuota: a.dailyQuota, rateLimitPerMinute: a.rateLimit, plan: a.plan }),
      );
      return out({ tenant_id: str('tenant'), daily_quota: a.dailyQuota, rate_limit_per_minute: a.rateLimit, plan: a.plan }, `tenant ${str('tenant')} updated`);
    }
  }
}

if (import.meta.main) process.exitCode = await cliMain(process.argv.slice(2));
