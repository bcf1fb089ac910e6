import { ConfigError, loadConfig } from './config';
import { createContext } from './context';
import { createApp } from './app';
import { seedDemoTenant } from './seed';
import { startWorkers } from './workers';
import { serveMetricsPort } from './features/metrics';
import { loadConfiguredLists } from './features/aml';
import { lastResort } from './plugins/http-errors';
import { dependencyDown } from './lib/dependency-down';

/** `bun run start`: the service. ROLE=all (default) | api | worker. `… cli <command>`: the operator CLI. */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  let ctx;
  try {
    ctx = await createContext(config);
  } catch (err) {
    console.error(`startup failed: ${(err as Error).message}`);
    process.exit(1);
  }
  let app;
  try {
    app = createApp(ctx);
  } catch (err) {
    console.error((err as Error).message.startsWith('configuration:') ? (err as Error).message : `startup failed: ${(err as Error).message}`);
    await ctx.close();
    process.exit(2);
  }
  // A database or Redis going away must not end the process (a worker that exits stalls every
  // queue): such failures escaping a promise or a socket are logged and the process carries on,
  // its pools reconnecting; anything else still ends it, as before, after logging.
  const survive = (kind: string) => (error: unknown) => {
    if (dependencyDown(error)) {
      ctx.log.warn(`${kind} from an unreachable dependency; continuing`, { error: error instanceof Error ? error.message : String(error) });
      return;
    }
    ctx.log.error(`${kind}; exiting`, { error: error instanceof Error ? error.message : String(error), stack: error instanceof Error ? error.stack?.split('\n').slice(0, 8).join(' | ') : undefined });
    process.exit(1);
  };
  process.on('unhandledRejection', survive('unhandled rejection'));
  process.on('uncaughtException', survive('uncaught exception'));
  if (config.role !== 'all' && !config.redisUrl)
    ctx.log.warn(`ROLE=${config.role} without REDIS_URL: rate limits and the cache of keys and scores are per process, and jobs run only in a ROLE=worker or ROLE=all process on the same database (set REDIS_URL to split roles)`);
  await seedDemoTenant(ctx, (s) => process.stdout.write(s + '\n'));
  await loadConfiguredLists(ctx);
  if (config.role !== 'api') {
    await startWorkers(ctx);
    ctx.log.info('workers started', { role: config.role, queue: ctx.jobs.kind });
  }
  const metricsServer = config.metricsPort ? serveMetricsPort(ctx.metrics, config.metricsPort) : null;
  if (config.role !== 'worker') {
    // no server-level body limit: Bun's own 413 has an empty body. The API enforces BODY_LIMIT_BYTES
    // itself (Content-Length checked before reading, a stream read at most that far), so every 413
    // is the §2.8 body and an unread body is never buffered (measured: RSS flat under 300 MiB sent)
    app.listen({
      port: config.port,
      hostname: '0.0.0.0',
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // never Bun's development page (it shows source, SQL and parameters) whatever NODE_ENV says
      development: false,
      error: (error: Error) => lastResort(ctx, null, error),
    });
    ctx.log.info('listening', { port: app.server?.port, role: config.role, database: ctx.database.dialect, redis: !!ctx.redis });
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info('shutting down', { signal });
    const timer = setTimeout(() => {
      ctx.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, 25_000);
    try {
      // stop accepting, let in-flight requests finish
      await app.server?.stop(false);
      metricsServer?.stop(true);
      await ctx.close();
    } finally {
      clearTimeout(timer);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

// the single binary is also the operator CLI: `pt-api cli <command> …`
if (process.argv[2] === 'cli') void import('./cli').then(async (m) => (process.exitCode = await m.cliMain(process.argv.slice(3))));
else void main();
