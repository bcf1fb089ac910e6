import { join } from 'node:path';

/** What bench/wrk-report.lua reports of one wrk run. */
export interface WrkResult {
  requests: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  non2xx: number;
}

/**
 * One wrk run (Debian package, a separate process, one thread) through bench/wrk-report.lua:
 * flat out, or at a fixed offered rate with `rate` (req/s); `idempotency`: each request with an
 * Idempotency-Key of its own.
 */
export async function wrk(url: string, o: { method?: string; body?: unknown; key?: string; connections: number; seconds: number; rate?: number; idempotency?: boolean }): Promise<WrkResult> {
  const p = Bun.spawn(['wrk', '-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--timeout', '5s', '-s', join(import.meta.dir, 'wrk-report.lua'), url], {
    env: {
      ...process.env,
      BENCH_METHOD: o.method ?? 'GET',
      BENCH_BODY: o.body === undefined ? '' : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
      BENCH_AUTH: o.key ?? '',
      BENCH_RATE: o.rate ? String(Math.round(o.rate)) : '',
      BENCH_IDEMPOTENCY: o.idempotency ? '1' : '',
    },
    stdout: 'pipe',
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk gave no report:\n${out}`);
  return JSON.parse(line);
}

const ROOT = join(import.meta.dir, '..');

/**
 * The runtime settings the service starts with (`bun run start`, the Docker image), given to every
 * process a bench starts, the bare baseline included: mimalloc keeps freed pages (see README).
 */
export const RUNTIME_ENV = { MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? '-1' };

/** Starts a bench process (the service or the bare server) and waits until it answers. */
export async function startProcess(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...RUNTIME_ENV, LOG_LEVEL: 'warn', ...env }, stdout: 'pipe', stderr: 'inherit' });
  let out = '';
  void (async () => {
    for await (const c of p.stdout as unknown as AsyncIterable<Uint8Array>) out += new TextDecoder().decode(c);
  })();
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${env.PORT}/healthz`)).ok || (await fetch(`http://127.0.0.1:${env.PORT}/bare`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  return { proc: p, output: () => out };
}

/** Runs the operator CLI against a bench database and returns its JSON answer. */
export async function benchCli(env: Record<string, string>, argv: string[]) {
  const p = Bun.spawn(['bun', 'run', 'src/cli.ts', ...argv], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return JSON.parse(out);
}
