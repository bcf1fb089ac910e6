/**
 * Throughput of the pure scoring engine over the sandbox fixtures.
 * Run: bun run bench/score-engine.ts [seconds]   (default 2)
 */
import { scoreCompany, type CompanyProfile } from '../src/features/score/engine';
import { SANDBOX_FIXTURES, sandboxLookup } from '../src/features/score/fixtures';

const seconds = Number(process.argv[2] ?? 2) > 0 ? Number(process.argv[2] ?? 2) : 2;

const profiles: CompanyProfile[] = [];
for (const f of SANDBOX_FIXTURES) {
  const r = sandboxLookup(f.nif, 0);
  if (r.kind === 'profile') profiles.push(r.profile);
}
for (let g = 1; g <= 5; g++) {
  const r = sandboxLookup('599000082', g);
  if (r.kind === 'profile') profiles.push(r.profile);
}

// Warm-up (JIT).
let sink = 0;
for (let i = 0; i < 20_000; i++) sink += scoreCompany(profiles[i % profiles.length]!, i & 1 ? 'pt' : 'en').score;

let n = 0;
const start = performance.now();
const deadline = start + seconds * 1000;
let now = start;
while (now < deadline) {
  for (let i = 0; i < 1000; i++, n++) sink += scoreCompany(profiles[n % profiles.length]!, n & 1 ? 'pt' : 'en').score;
  now = performance.now();
}
const elapsed = (now - start) / 1000;
const perSec = n / elapsed;
console.log(
  JSON.stringify({
    evaluations: n,
    seconds: Number(elapsed.toFixed(3)),
    evaluations_per_second: Math.round(perSec),
    microseconds_per_evaluation: Number((1e6 / perSec).toFixed(2)),
    profiles: profiles.length,
    bun: Bun.version,
    checksum: sink,
  }),
);
