/**
 * AML benchmark (not a test): an EU-sized list (5 000 entities, 25 000 names) in the FSF 1.1
 * shape, loaded through AmlService (time, peak RSS), then screens against it plus the UN sample:
 * the pure matcher, and the whole service call (screen + store), p50/p95/p99.
 *   bun run bench/aml.ts [--db sqlite|postgres]
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createLogger } from '../src/lib/log';
import { mulberry32 } from '../src/lib/prng';
import { amlService, openListSource } from '../src/features/aml';
import { buildIndex, screen } from '../src/features/aml/matcher';
import { parseEuList, parseUnList, type ListEntry } from '../src/features/aml/lists';
import { benchDataDir } from './temp-dir';

const dbKind = process.argv.includes('--db') ? process.argv[process.argv.indexOf('--db') + 1] : 'sqlite';
const rand = mulberry32(19);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
const FIRST = ['Ahmad', 'Olga', 'Ivan', 'Sergei', 'Mohammed', 'Ali', 'Hassan', 'Dmitri', 'Elena', 'Viktor', 'Yusuf', 'Omar', 'Tatiana', 'Nikolai', 'Fatima', 'Abdul', 'Karim', 'Anna', 'Pavel', 'Igor'];
const LAST = ['Petrov', 'Ivanov', 'Al-Khalifa', 'Haddad', 'Smirnov', 'Kuznetsov', 'Rahman', 'Hussein', 'Popov', 'Sokolov', 'Lebedev', 'Kozlov', 'Novikov', 'Morozov', 'Volkov', 'Aziz', 'Saleh', 'Nasser', 'Karimov', 'Aliyev'];
const WORDS = ['Shipping', 'Trading', 'Energy', 'Holding', 'Bank', 'Industrial', 'Group', 'Logistics', 'Defence', 'Systems', 'Oil', 'Gas', 'Metals', 'Capital', 'Export'];
const syllable = () => pick(['ka', 'ro', 'mi', 'za', 'lev', 'dan', 'shi', 'tor', 'vel', 'nur', 'bek', 'ova', 'ski', 'lin', 'mar']);
const word = () => syllable() + syllable() + syllable();

function euFile(entities: number, namesPer: number) {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<export xmlns="http://eu.europa.ec/fpi/fsd/export" generationDate="2026-11-20T10:00:00.000+01:00" globalFileId="1">'];
  for (let i = 0; i < entities; i++) {
    const person = rand() < 0.7;
    parts.push(`<sanctionEntity euReferenceNumber="EU.${1000 + i}.${i % 97}" logicalId="${i}" designationDate="2022-03-15"><regulation programme="${pick(['RUS', 'BLR', 'SYR', 'IRN', 'TAQA'])}" publicationDate="2022-03-15"/><subjectType code="${person ? 'person' : 'enterprise'}"/>`);
    for (let n = 0; n < namesPer; n++) {
      const whole = person ? `${pick(FIRST)} ${word()} ${pick(LAST)}${n ? ` ${word()}` : ''}` : `${word()} ${pick(WORDS)} ${pick(WORDS)}${n ? ` ${word()}` : ''}`;
      parts.push(`<nameAlias wholeName="${whole}" strong="${n < 2}" logicalId="${i * 10 + n}"/>`);
    }
    if (person) parts.push(`<citizenship countryIso2Code="${pick(['RU', 'BY', 'SY', 'IR'])}"/><birthdate birthdate="19${50 + Math.floor(rand() * 40)}-0${1 + Math.floor(rand() * 9)}-1${Math.floor(rand() * 9)}"/>`);
    parts.push('</sanctionEntity>');
  }
  parts.push('</export>');
  return parts.join('\n');
}

const dir = benchDataDir('bench-aml-');
const file = join(dir, 'eu.xml');
writeFileSync(file, euFile(5000, 5));
const size = Bun.file(file).size;

let dbName: string | null = null;
const env: Record<string, string> = { LOG_LEVEL: 'silent', SEED_DEMO_TENANT: 'false', AML_UN_SOURCE: 'none' };
if (dbKind === 'postgres') {
  dbName = `bench_aml_${Date.now()}`;
  const admin = postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  await admin.end();
  Object.assign(env, { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`, ENCRYPTION_KEY: 'd'.repeat(64) });
} else env.DATA_DIR = dir;
const ctx = await createContext(loadConfig(env), { log: createLogger('silent') });
const service = amlService(ctx);

// --- load ----------------------------------------------------------------------------------------
Bun.gc(true);
const rssBefore = process.memoryUsage().rss;
let peak = rssBefore;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const t0 = performance.now();
const loaded = await service.loadList('eu', await openListSource(file), file);
const loadMs = performance.now() - t0;
clearInterval(sampler);
const un = await service.loadList('un', await openListSource('bundled:un'), 'bundled:un');

// --- pure matcher --------------------------------------------------------------------------------
const entries: ListEntry[] = [];
await parseEuList(Bun.file(file).stream() as never, (e) => void entries.push(e));
await parseUnList(Bun.file(join(import.meta.dir, '../fixtures/sanctions/un_consolidated_list.xml')).stream() as never, (e) => void entries.push(e));
const index = buildIndex(entries);
const queries: string[] = [];
for (let i = 0; i < 2000; i++) {
  if (i % 2) {
    const e = entries[Math.floor(rand() * entries.length)]!;
    const name = e.names[0]!.name;
    queries.push(name.length > 6 ? name.slice(0, 3) + name[4] + name[3] + name.slice(5) : name);
  } else queries.push(`${pick(['João', 'Maria', 'José', 'Ana', 'Rui', 'Pedro'])} ${pick(['Silva', 'Santos', 'Ferreira', 'Pereira', 'Oliveira', 'Costa'])} ${pick(['Lopes', 'Marques', 'Nunes', 'Rocha'])}`);
}
const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!;
for (const q of queries.slice(0, 200)) screen(index, { name: q, type: 'any', min_score: 0.85 });
const pure: number[] = [];
for (const q of queries) {
  const s = performance.now();
  screen(index, { name: q, type: 'any', min_score: 0.85 });
  pure.push(performance.now() - s);
}

// --- the service call (index from the database, screen, store) ---------------------------------------
const caller = { tenantId: (await ctx.tenants.createTenant({ name: 'bench', plan: 'enterprise' })).tenant_id, keyId: null, env: 'sandbox' as const, requestId: null };
await service.screen(caller, { name: 'warm up' });
const whole: number[] = [];
for (const q of queries.slice(0, 1000)) {
  const s = performance.now();
  await service.screen(caller, { name: q });
  whole.push(performance.now() - s);
}
const perSec = (xs: number[]) => Math.round(xs.length / (xs.reduce((a, b) => a + b, 0) / 1000));

console.log(`${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version} · ${dbKind}`);
console.log(`EU-sized file: ${(size / 1e6).toFixed(1)} MB, ${loaded.entries} entries, ${loaded.names} names: loaded in ${(loadMs / 1000).toFixed(2)} s, peak RSS +${((peak - rssBefore) / 1e6).toFixed(0)} MB; UN sample ${un.entries} entries`);
console.log(`index: ${index.names.length} names`);
console.log(`pure matcher: ${perSec(pure)} screens/s, p50 ${pct(pure, 0.5).toFixed(2)} ms, p95 ${pct(pure, 0.95).toFixed(2)} ms, p99 ${pct(pure, 0.99).toFixed(2)} ms`);
console.log(`service (screen + store, sequential): ${perSec(whole)} screens/s, p50 ${pct(whole, 0.5).toFixed(2)} ms, p95 ${pct(whole, 0.95).toFixed(2)} ms, p99 ${pct(whole, 0.99).toFixed(2)} ms`);
await ctx.close();
if (dbName) {
  const admin = postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
