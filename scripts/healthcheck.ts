// Container health check: /readyz for processes that serve HTTP, /metrics on METRICS_PORT for workers.
export {};
const role = process.env.ROLE ?? 'all';
const url =
  role === 'worker'
    ? process.env.METRICS_PORT
      ? `http://127.0.0.1:${process.env.METRICS_PORT}/metrics`
      : null
    : `http://127.0.0.1:${process.env.PORT ?? 3000}/readyz`;
if (!url) process.exit(0); // a worker without a metrics port has nothing to probe; the process being up is the check
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
