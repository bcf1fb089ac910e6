/**
 * Throughput benchmark for the ESG engine: `bun run bench/esg-engine.ts [seconds]`.
 * Builds 1,024 varied inputs (all sectors, sparse to complete questionnaires, en/pt) with a
 * seeded PRNG, then calls assessEsg in a loop for ~2 s on one thread and prints evaluations/second.
 */
import { assessEsg } from '../src/features/esg/engine';
import { INDICATORS, SECTORS, type AnswerValue } from '../src/features/esg/questionnaire';
import { mulberry32 } from '../src/lib/prng';


const rng = mulberry32(2025);
const DIVISION_SAMPLES: Record<string, string[]> = { C: ['C10', 'C25', 'C33'], J: ['J62'], M: ['M69', 'M73'], F: ['F41'], I: ['I56'] };

function value(ind: (typeof INDICATORS)[number]): AnswerValue {
  if (ind.applicability !== null && ind.key !== 'waste_recycled_pct' && rng() < 0.1) return 'not_applicable';
  switch (ind.type) {
    case 'boolean':
      return rng() < 0.8;
    case 'string[]':
      return ind.options!.filter(() => rng() < 0.4);
    case 'integer':
      return rng() < 0.8 ? 0 : 1 + Math.floor(rng() * 4);
    case 'number': {
      const max = ind.max!;
      return max <= 1000 ? Math.round(rng() * max * 10) / 10 : Math.round(10 ** (rng() * Math.log10(max)) * 100) / 100;
    }
    default:
      return 'x';
  }
}

const inputs: { sector: string; answers: Record<string, AnswerValue> }[] = [];
for (let n = 0; n < 1024; n++) {
  const section = SECTORS[Math.floor(rng() * SECTORS.length)]!.code;
  const divs = DIVISION_SAMPLES[section];
  const sector = divs && rng() < 0.5 ? divs[Math.floor(rng() * divs.length)]! : section;
  const density = n % 8 === 0 ? 0 : rng();
  const answers: Record<string, AnswerValue> = {};
  for (const ind of INDICATORS) if (rng() < density) answers[ind.key] = value(ind);
  inputs.push({ sector, answers });
}

const seconds = Number(process.argv[2] ?? 2);
let sink = 0;
// warm-up
for (let k = 0; k < 50_000; k++) sink += assessEsg(inputs[k & 1023]!, k & 1 ? 'pt' : 'en').overall;

let evals = 0;
const start = Bun.nanoseconds();
const deadline = start + seconds * 1e9;
let now = start;
while (now < deadline) {
  for (let k = 0; k < 4096; k++) {
    const r = assessEsg(inputs[(evals + k) & 1023]!, k & 1 ? 'pt' : 'en');
    sink += r.overall + r.recommendations.length;
  }
  evals += 4096;
  now = Bun.nanoseconds();
}
const elapsed = (now - start) / 1e9;
const rate = evals / elapsed;
console.log(
  `esg-engine: ${evals} evaluations in ${elapsed.toFixed(2)} s = ${Math.round(rate).toLocaleString('en-US')} evaluations/s (1 thread; ${(1e6 / rate).toFixed(2)} µs/eval; checksum ${sink % 1000})`,
);
