import { Type as T, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Configuration comes only from environment variables, validated here at start.
 * Every variable is listed in the README. A bad value stops the start with one line naming it.
 */
const Int = (min: number, max: number) => T.String({ pattern: '^[0-9]+$', description: `integer ${min}..${max}`, min, max } as never);

const EnvSchema = T.Object({
  PORT: T.Optional(Int(0, 65535)),
  DATA_DIR: T.Optional(T.String({ minLength: 1 })),
  DATABASE_URL: T.Optional(T.String({ pattern: '^postgres(ql)?://' })),
  REDIS_URL: T.Optional(T.String({ pattern: '^rediss?://' })),
  REDIS_PREFIX: T.Optional(T.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' })),
  LOG_LEVEL: T.Optional(T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error'), T.Literal('silent')])),
  ROLE: T.Optional(T.Union([T.Literal('all'), T.Literal('api'), T.Literal('worker')])),
  PUBLIC_BASE_URL: T.Optional(T.String({ pattern: '^https?://' })),
  BODY_LIMIT_BYTES: T.Optional(Int(1, 104857600)),
  ENCRYPTION_KEY: T.Optional(T.String({ pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$', description: '32 bytes as 64 hex characters or base64' })),
  ROADMAP_URL: T.Optional(T.String({ pattern: '^https?://' })),
  ANON_RATE_LIMIT_PER_MINUTE: T.Optional(Int(1, 1000000)),
  DEFAULT_DAILY_QUOTA: T.Optional(Int(1, 1000000000)),
  METRICS_TOKEN: T.Optional(T.String({ minLength: 16, description: 'at least 16 characters' })),
  METRICS_PORT: T.Optional(Int(1, 65535)),
  TRUST_PROXY: T.Optional(T.Union([T.Literal('true'), T.Literal('false')])),
  SEED_DEMO_TENANT: T.Optional(T.Union([T.Literal('true'), T.Literal('false')])),
  BUREAU_URL: T.Optional(T.String({ pattern: '^https?://' })),
  BUREAU_API_KEY: T.Optional(T.String({ minLength: 1 })),
  CRC_URL: T.Optional(T.String({ pattern: '^https?://' })),
  CRC_API_KEY: T.Optional(T.String({ minLength: 1 })),
  TAX_URL: T.Optional(T.String({ pattern: '^https?://' })),
  TAX_API_KEY: T.Optional(T.String({ minLength: 1 })),
  ADAPTER_TIMEOUT_MS: T.Optional(Int(50, 60000)),
  INSURER_URL: T.Optional(T.String({ pattern: '^https?://' })),
  PORTAL_LINK_TTL_SECONDS: T.Optional(Int(1, 86_400)),
  INSURER_API_KEY: T.Optional(T.String({ minLength: 1 })),
  INSURER_NAME: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
  INSURER_TIMEOUT_MS: T.Optional(Int(100, 60000)),
  WEBHOOK_TIMEOUT_MS: T.Optional(Int(100, 60000)),
  WEBHOOK_RETRY_DELAYS_MS: T.Optional(T.String({ pattern: '^[0-9]+(,[0-9]+)*$', description: 'comma-separated delays in ms before attempts 2, 3, …' })),
  WEBHOOK_FAILURE_THRESHOLD: T.Optional(Int(1, 1000)),
  WEBHOOK_DISABLE_AFTER_MS: T.Optional(Int(0, 30 * 86_400_000)),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: T.Optional(T.Union([T.Literal('true'), T.Literal('false')])),
  RESCORE_CRON: T.Optional(T.String({ pattern: '^\\S+( \\S+){4,5}$', description: 'cron pattern, e.g. "0 2 * * *"' })),
  RESCORE_TZ: T.Optional(T.String({ minLength: 1 })),
  RESCORE_LOOKBACK_DAYS: T.Optional(Int(1, 3650)),
  SQLITE_BUSY_TIMEOUT_MS: T.Optional(Int(0, 600_000)),
  SQLITE_WAL_RESTART_MB: T.Optional(Int(1, 65_536)),
  AML_UN_SOURCE: T.Optional(T.String({ minLength: 1, description: 'path or http(s) URL of the UN consolidated list XML, or "none"' })),
  SAFT_SYNC_MAX_BYTES: T.Optional(Int(0, 536_870_912)),
  SAFT_MAX_BYTES: T.Optional(Int(1024, 4_294_967_296)),
  SAFT_STALL_MS: T.Optional(Int(100, 3_600_000)),
  INVOICE_DECODE_WORKERS: T.Optional(Int(0, 16)),
  FACTORING_DEFAULT_AFTER_DAYS: T.Optional(Int(1, 3650)),
  OAUTH_TOKEN_TTL_SECONDS: T.Optional(Int(60, 86_400)),
  OAUTH_KEY_ROTATE_DAYS: T.Optional(Int(1, 365)),
  AML_REFRESH_CRON: T.Optional(T.String({ minLength: 9, description: 'cron pattern of the sanctions list refresh' })),
  AML_EU_SOURCE: T.Optional(T.String({ minLength: 1, description: 'path or http(s) URL of the EU FSF XML 1.1 file, or "none"' })),
  BASE_RATE_NAME: T.Optional(T.String({ minLength: 1, maxLength: 64, description: 'name of the base rate spreads are quoted over' })),
  BASE_RATE_PCT: T.Optional(T.String({ pattern: '^-?[0-9]{1,2}(\\.[0-9]{1,4})?$', description: 'base rate in percent, e.g. 2.05' })),
  BASE_RATE_AS_OF: T.Optional(T.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'date of the base rate value, YYYY-MM-DD' })),
});

export type Env = Static<typeof EnvSchema>;

export interface Config {
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  /** namespace of every Redis key (rate limits, queues): deployments sharing a Redis must differ */
  redisPrefix: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  role: 'all' | 'api' | 'worker';
  publicBaseUrl: string | null;
  bodyLimitBytes: number;
  encryptionKey: string | null;
  roadmapUrl: string | null;
  anonRateLimitPerMinute: number;
  defaultDailyQuota: number;
  metricsToken: string | null;
  metricsPort: number | null;
  trustProxy: boolean;
  seedDemoTenant: boolean;
  webhookTimeoutMs: number;
  /** delays before attempts 2..n; attempts = delays + 1 (default 5 min, 30 min: 3 attempts within 1 h) */
  webhookRetryDelaysMs: number[];
  webhookFailureThreshold: number;
  /**
   * an endpoint is auto-disabled only when it has failed webhookFailureThreshold times in a row AND
   * the first failure of that streak is at least this old (failures spread over time, not a burst)
   */
  webhookDisableAfterMs: number;
  /** sandbox endpoints may target private and loopback addresses (local development); live never */
  webhookAllowPrivateTargets: boolean;
  rescoreCron: string;
  rescoreTz: string;
  rescoreLookbackDays: number;
  /** sanctions list sources loaded at start when the list has no version yet (null: none) */
  amlSources: { un: string | null; eu: string | null };
  /** SAF-T files declaring a larger Content-Length are parsed in the background (202 and a run to poll) */
  saftSyncMaxBytes: number;
  /** the largest SAF-T file accepted (413 above) */
  saftMaxBytes: number;
  /** worker threads reading invoice images and PDFs (0: on the event loop; null: the default for the cores) */
  invoiceDecodeWorkers: number | null;
  /** a background SAF-T run whose worker has not beaten for this long is retried */
  saftStallMs: number;
  /** a funded factoring operation still unpaid this many days after its last due date is defaulted */
  factoringDefaultAfterDays: number;
  /** lifetime of OAuth access tokens */
  oauthTokenTtlSeconds: number;
  /** lifetime of a supplier-portal link */
  portalLinkTtlSeconds: number;
  /** the credit insurer of live submissions (POST /v1/insurance/submit); null: not configured */
  insurer: { url: string; apiKey: string | null; name: string; timeoutMs: number } | null;
  /** a new token-signing key takes over after this many days */
  oauthKeyRotateDays: number;
  /** when the configured list sources are checked for a new generation (job aml.refresh) */
  amlRefreshCron: string;
  /** SQLite: how long a statement waits for another process's lock before it fails (the request then answers 503) */
  sqliteBusyTimeoutMs: number;
  /** SQLite: the WAL size (bytes) past which writes pause for a checkpoint that restarts it */
  sqliteWalRestartBytes: number;
  /** the base rate the spreads index quotes over (GET /v1/index/spreads) */
  baseRate: { name: string; valuePct: number; asOf: string };
  /** ERP_* variables (providers, sync knobs): validated by the ERP registry when the app is built */
  erpEnv: Record<string, string>;
  /** live-tier data sources (all three or the live tier is "not available") */
  adapters: Record<'BUREAU_URL' | 'BUREAU_API_KEY' | 'CRC_URL' | 'CRC_API_KEY' | 'TAX_URL' | 'TAX_API_KEY' | 'ADAPTER_TIMEOUT_MS', string | undefined>;
}

export class ConfigError extends Error {}

/** an IANA time zone the runtime knows (the scheduler would otherwise fail later, after the start) */
function timeZone(tz: string): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return tz;
  } catch {
    throw new ConfigError(`configuration: RESCORE_TZ is invalid (an IANA time zone such as Europe/Lisbon; got ${JSON.stringify(tz)})`);
  }
}

/** where clients reach the service (PUBLIC_BASE_URL, else this process on localhost): links in answers, the OAuth issuer */
export const publicBaseUrl = (c: Pick<Config, 'publicBaseUrl' | 'port'>) => c.publicBaseUrl ?? `http://localhost:${c.port}`;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  const first = Value.Errors(EnvSchema, picked).First();
  if (first) {
    const name = first.path.replace(/^\//, '');
    throw new ConfigError(`configuration: ${name} is invalid (${first.schema.description ?? first.message})`);
  }
  const int = (key: keyof Env, def: number) => {
    if (picked[key] === undefined) return def;
    const n = Number(picked[key]);
    const schema = EnvSchema.properties[key] as unknown as { min: number; max: number };
    if (!Number.isSafeInteger(n) || n < schema.min || n > schema.max)
      throw new ConfigError(`configuration: ${key} is invalid (integer ${schema.min}..${schema.max})`);
    return n;
  };
  const e = picked as Env;
  return {
    port: int('PORT', 3000),
    dataDir: e.DATA_DIR ?? './data',
    databaseUrl: e.DATABASE_URL ?? null,
    redisUrl: e.REDIS_URL ?? null,
    redisPrefix: e.REDIS_PREFIX ?? 'svc',
    logLevel: e.LOG_LEVEL ?? 'info',
    role: e.ROLE ?? 'all',
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? null,
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024),
    encryptionKey: e.ENCRYPTION_KEY ?? null,
    roadmapUrl: e.ROADMAP_URL ?? null,
    anonRateLimitPerMinute: int('ANON_RATE_LIMIT_PER_MINUTE', 60),
    defaultDailyQuota: int('DEFAULT_DAILY_QUOTA', 100_000),
    metricsToken: e.METRICS_TOKEN ?? null,
    metricsPort: e.METRICS_PORT ? int('METRICS_PORT', 0) : null,
    trustProxy: e.TRUST_PROXY === 'true',
    seedDemoTenant: e.SEED_DEMO_TENANT !== 'false',
    webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000),
    webhookRetryDelaysMs: (e.WEBHOOK_RETRY_DELAYS_MS ?? '300000,1800000').split(',').map(Number),
    webhookFailureThreshold: int('WEBHOOK_FAILURE_THRESHOLD', 15),
    webhookDisableAfterMs: int('WEBHOOK_DISABLE_AFTER_MS', 24 * 3600_000),
    // default: allowed for the embedded single-process sandbox, refused for a hosted deployment
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS ? e.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true' : !e.DATABASE_URL,
    rescoreCron: e.RESCORE_CRON ?? '0 2 * * *',
    rescoreTz: timeZone(e.RESCORE_TZ ?? 'Europe/Lisbon'),
    rescoreLookbackDays: int('RESCORE_LOOKBACK_DAYS', 90),
    sqliteBusyTimeoutMs: int('SQLITE_BUSY_TIMEOUT_MS', 5000),
    sqliteWalRestartBytes: int('SQLITE_WAL_RESTART_MB', 256) * 1024 * 1024,
    // the UN sample shipped with the service by default, so screening works on a fresh start
    amlRefreshCron: e.AML_REFRESH_CRON ?? '20 */6 * * *',
    saftSyncMaxBytes: int('SAFT_SYNC_MAX_BYTES', 20 * 1024 * 1024),
    saftMaxBytes: int('SAFT_MAX_BYTES', 512 * 1024 * 1024),
    invoiceDecodeWorkers: e.INVOICE_DECODE_WORKERS === undefined ? null : int('INVOICE_DECODE_WORKERS', 0),
    saftStallMs: int('SAFT_STALL_MS', 60_000),
    factoringDefaultAfterDays: int('FACTORING_DEFAULT_AFTER_DAYS', 90),
    oauthTokenTtlSeconds: int('OAUTH_TOKEN_TTL_SECONDS', 900),
    portalLinkTtlSeconds: int('PORTAL_LINK_TTL_SECONDS', 900),
    insurer: e.INSURER_URL ? { url: e.INSURER_URL.replace(/\/$/, ''), apiKey: e.INSURER_API_KEY ?? null, name: e.INSURER_NAME ?? 'insurer', timeoutMs: int('INSURER_TIMEOUT_MS', 5000) } : null,
    oauthKeyRotateDays: int('OAUTH_KEY_ROTATE_DAYS', 30),
    amlSources: { un: e.AML_UN_SOURCE === 'none' ? null : (e.AML_UN_SOURCE ?? 'bundled:un'), eu: !e.AML_EU_SOURCE || e.AML_EU_SOURCE === 'none' ? null : e.AML_EU_SOURCE },
    baseRate: { name: e.BASE_RATE_NAME ?? 'EURIBOR 3M', valuePct: e.BASE_RATE_PCT !== undefined ? Number(e.BASE_RATE_PCT) : 2.05, asOf: e.BASE_RATE_AS_OF ?? '2026-11-02' },
    erpEnv: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[0].startsWith('ERP_') && e[1] !== undefined && e[1] !== '')),
    adapters: {
      BUREAU_URL: e.BUREAU_URL,
      BUREAU_API_KEY: e.BUREAU_API_KEY,
      CRC_URL: e.CRC_URL,
      CRC_API_KEY: e.CRC_API_KEY,
      TAX_URL: e.TAX_URL,
      TAX_API_KEY: e.TAX_API_KEY,
      ADAPTER_TIMEOUT_MS: String(int('ADAPTER_TIMEOUT_MS', 1500)),
    },
  };
}
