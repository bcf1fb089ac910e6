import { ConfigError, loadConfig } from './config';
import { createContext } from './context';
import { createApp } from './app';
import { seedDemoTenant } from './seed';
import { startWorkers } from './workers';
import { serveMetricsPort } from './features/metrics';

/** `bun run start`: the service. ROLE=all (default) | api | worker. */
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
  if (config.role !== 'all' && !config.redisUrl)
    ctx.log.warn(`ROLE=${config.role} without REDIS_URL: rate limits and the cache of keys and scores are per process, and jobs run only in a ROLE=worker or ROLE=all process on the same database (set REDIS_URL to split roles)`);
  await seedDemoTenant(ctx, (s) => process.stdout.write(s + '\n'));
  if (config.role !== 'api') {
    await startWorkers(ctx);
    ctx.log.info('workers started', { role: config.role, queue: ctx.jobs.kind });
  }
  const metricsServer = config.metricsPort ? serveMetricsPort(ctx.metrics, config.metricsPort) : null;
  if (config.role !== 'worker') {
    // Bun's own limit only backstops ours: the API answers 413 with its error body up to 16× the limit
    app.listen({ port: config.port, hostname: '0.0.0.0', maxRequestBodySize: Math.max(config.bodyLimitBytes * 16, 16 * 1024 * 1024) });
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

void main();
