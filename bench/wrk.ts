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
 * flat out, or at a fixed offered rate with `rate` (req/s).
 */
export async function wrk(url: string, o: { method?: string; body?: unknown; key?: string; connections: number; seconds: number; rate?: number }): Promise<WrkResult> {
  const p = Bun.spawn(['wrk', '-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--timeout', '5s', '-s', join(import.meta.dir, 'wrk-report.lua'), url], {
    env: {
      ...process.env,
      BENCH_METHOD: o.method ?? 'GET',
      BENCH_BODY: o.body === undefined ? '' : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
      BENCH_AUTH: o.key ?? '',
      BENCH_RATE: o.rate ? String(Math.round(o.rate)) : '',
    },
    stdout: 'pipe',
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk gave no report:\n${out}`);
  return JSON.parse(line);
}
