import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config';
import Redis from 'ioredis';
import { openDatabase } from './db/client';
import { announceTenantChanges } from './lib/cache-generations';
import { ENVS, PLANS, SCOPES, TenantService, type Env, type Plan } from './features/tenants/service';

/** Operator CLI: same configuration (environment) as the server. `bun run cli help` lists commands. */
const USAGE = `usage: bun run cli <command> [options]

  tenant create --name N [--plan free|starter|growth|enterprise] [--env sandbox|live]
                [--scopes a,b] [--daily-quota N] [--rate-limit N] [--json]
  tenant suspend --tenant ID
  tenant resume  --tenant ID
  tenant quota   --tenant ID [--daily-quota N] [--rate-limit N] [--plan P]
  key create     --tenant ID --env sandbox|live [--name N] [--scopes a,b] [--rate-limit N] [--json]

  --rate-limit on a tenant is its negotiated per-minute limit (enterprise plan);
  on a key it overrides the plan's limit for that key.
  Scopes: ${SCOPES.join(', ')}
  Give it the service's environment (DATABASE_URL, REDIS_URL, …). Exit status 3 (PostgreSQL): the change is
  saved but could not be announced to the running processes (Redis unreachable).`;

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

async function run(argv: string[]) {
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
      'rate-limit': { type: 'string' },
      'daily-quota': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const [noun, verb, ...rest] = positionals;
  if (values.help || noun === 'help') {
    console.log(USAGE);
    return;
  }
  // no command at all is a mistake of the caller (a script), not a request for help: usage on stderr, exit 2
  if (!noun) throw new UsageError('a command is required');
  if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const command = `${noun} ${verb ?? ''}`.trim();
  const known = ['tenant create', 'tenant suspend', 'tenant resume', 'tenant quota', 'key create'];
  if (!known.includes(command)) throw new UsageError(`unknown command "${command}"`);

  // validate every argument before touching the database
  const plan = oneOf<Plan>('plan', values.plan, PLANS);
  const env = oneOf<Env>('env', values.env, ENVS);
  const scopeList = scopes(values.scopes);
  const rateLimit = positiveInt('rate-limit', values['rate-limit']);
  const dailyQuota = positiveInt('daily-quota', values['daily-quota']);
  if (command === 'tenant create') required('name', values.name);
  if (command !== 'tenant create') required('tenant', values.tenant);
  if (command === 'key create') required('env', values.env);

  const config = loadConfig();
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
  const tenants = new TenantService(database, () => new Date(), config.defaultDailyQuota);
  const out = (obj: Record<string, unknown>, human: string) => console.log(values.json ? JSON.stringify(obj) : human);
  try {
    switch (command) {
      case 'tenant create': {
        const r = await tenants.createTenant({ name: values.name!, plan, env, scopes: scopeList, dailyQuota, rateLimitPerMinute: rateLimit });
        out(r, `tenant ${r.tenant_id} created\napi key ${r.api_key_id}: ${r.api_key}\n(store the key now: it is not shown again)`);
        break;
      }
      case 'key create': {
        const r = await tenants.createKey({ tenantId: values.tenant!, env: env!, name: values.name, scopes: scopeList, rateLimitPerMinute: rateLimit });
        out(r, `api key ${r.api_key_id}: ${r.api_key}\n(store the key now: it is not shown again)`);
        break;
      }
      case 'tenant suspend':
      case 'tenant resume': {
        const status = verb === 'suspend' ? 'suspended' : 'active';
        await tenants.setStatus(values.tenant!, status);
        out({ tenant_id: values.tenant, status }, `tenant ${values.tenant} is ${status}`);
        break;
      }
      case 'tenant quota': {
        if (dailyQuota === undefined && rateLimit === undefined && plan === undefined) throw new UsageError('give --daily-quota, --rate-limit and/or --plan');
        await tenants.setQuota(values.tenant!, { dailyQuota, rateLimitPerMinute: rateLimit, plan });
        out({ tenant_id: values.tenant, daily_quota: dailyQuota, rate_limit_per_minute: rateLimit, plan }, `tenant ${values.tenant} updated`);
        break;
      }
    }
  } finally {
    await database.close();
    redis?.disconnect();
  }
  if (unannounced) {
    console.error('warning: the change is saved, but Redis could not be reached to tell the running processes; they apply it within 10 s');
    process.exitCode = 3;
  }
}

run(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`error: ${(err as Error).message}`);
  process.exit(1);
});
