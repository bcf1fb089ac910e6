/**
 * The supplier portal (issue 21) as a person sees it, in headless Chromium (Debian's package,
 * driven by puppeteer-core) against a started sandbox: the embed link loads the supplier's offers
 * in pt-PT, the accept button (reached by keyboard) accepts one and the page and the API show it;
 * English on request; an altered or expired link shows an error page; the page may be framed only
 * by the programme's origins and loads nothing from outside.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { runCli, spawnServer } from './helpers';
setDefaultTimeout(60_000); // hooks ignore bunfig's timeout and default to 5 s
/** the page's document, inside page.evaluate (runs in the browser) */
declare const document: any;

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
let server: Awaited<ReturnType<typeof spawnServer>>;
let browser: Browser;
let dir: string;
let key = '';
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
};

beforeAll(async () => {
  if (!CHROMIUM) throw new Error('Chromium is not installed (apt-get install chromium; .ci/run installs it)');
  dir = mkdtempSync(join(tmpdir(), 'portal-'));
  server = await spawnServer({ DATA_DIR: dir, SEED_DEMO_TENANT: 'true', DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'warn', PORTAL_LINK_TTL_SECONDS: '4' });
  key = /sk_test_[0-9a-f]{28}/.exec(server.output())?.[0] ?? '';
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function programmeWithOffers(series = 'FT 2026/50') {
  const p = (await api('POST', '/v1/confirming/anchor', { anchor_nif: '599000015', anchor_name: 'Distribuidora Alfa, S.A.', limit_cents: 10_000_000, payment_terms_days: 90, frame_ancestors: ['https://fornecedores.alfa.pt'] })).body;
  await api('POST', `/v1/confirming/anchor/${p.programme_id}/suppliers`, { supplier_nif: '599000031', name: 'Metalomecânica Exemplo, Lda', iban: 'PT50000201231234567890154' });
  const due = new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10);
  const issued = new Date().toISOString().slice(0, 10);
  const payables = (await api('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { payables: [
    { supplier_nif: '599000031', number: `${series}1`, issue_date: issued, due_date: due, amount_cents: 1_845_000 },
    { supplier_nif: '599000031', number: `${series}2`, issue_date: issued, due_date: due, amount_cents: 250_000 },
  ] })).body.data;
  return { p, payables };
}

describe('the supplier portal in a browser', () => {
  test('the offers in pt-PT; accept one with the keyboard; the page and the API show it accepted', async () => {
    const { p, payables } = await programmeWithOffers();
    const link = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(server.base.replace('127.0.0.1', 'localhost')) && !r.url().startsWith(server.base)) outside.push(r.url());
    });
    const res = await page.goto(link.url, { waitUntil: 'load' });
    expect(res!.status()).toBe(200);
    const csp = res!.headers()['content-security-policy'];
    expect(csp).toContain('frame-ancestors https://fornecedores.alfa.pt');
    expect(csp).toContain("default-src 'none'");
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('pt-PT');
    const text = await page.evaluate(() => document.body.innerText);
    for (const s of ['Pagamentos antecipados', 'Metalomecânica Exemplo, Lda', 'Distribuidora Alfa, S.A.', 'FT 2026/501', '18 450,00 €', 'Valor líquido', 'Proposta']) expect(text).toContain(s);
    const net = payables[0].offer.net_cents;
    expect(text).toContain(`${Math.floor(net / 100).toLocaleString('fr-FR').replace(/\u202f|\u00a0/g, ' ')},${String(net % 100).padStart(2, '0')} €`);
    // every button has an accessible name; reach the first by keyboard and press Enter
    const names = await page.$$eval('button', (bs) => bs.map((b) => b.getAttribute('aria-label') ?? ''));
    expect(names.every((n) => n.startsWith('Aceitar o pagamento antecipado'))).toBe(true);
    let focused = '';
    for (let i = 0; i < 10 && !focused.includes('FT 2026/501'); i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
    }
    expect(focused).toContain('FT 2026/501');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
    const after = await page.evaluate(() => document.body.innerText);
    expect(after).toContain('Aceitou o pagamento antecipado da fatura FT 2026/501');
    expect(await page.$eval(`tr[id="${payables[0].payable_id}"] td[data-status]`, (td) => td.getAttribute('data-status'))).toBe('accepted');
    expect(await page.$$eval('button', (bs) => bs.length)).toBe(1); // only the other offer is left to accept
    expect((await api('GET', `/v1/confirming/payables/${payables[0].payable_id}`)).body).toMatchObject({ status: 'accepted', history: [expect.anything(), expect.objectContaining({ by: 'portal' })] });
    expect(outside).toEqual([]);
    // English on request
    await page.goto(link.url.replace('lang=pt-PT', 'lang=en'), { waitUntil: 'load' });
    const en = await page.evaluate(() => document.body.innerText);
    for (const s of ['Early payments', '€18,450.00', 'Accepted', 'Net amount']) expect(en).toContain(s);
    await page.close();
  });

  test('a stale accept says in the page\'s language what became of the invoice (no ids, no back-office words); every status has its label', async () => {
    const { p, payables } = await programmeWithOffers('FT 2026/60');
    const link = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    const page = await browser.newPage();
    await page.goto(link.url, { waitUntil: 'load' });
    // the first offer's form, as the page holds it, sent twice (a second tab, a double click)
    const fields = await page.$eval(`tr[id="${payables[0].payable_id}"] form`, (f) => Object.fromEntries([...f.querySelectorAll('input')].map((i: any) => [i.name, i.value])));
    const send = () => fetch(`${server.base}/portal/confirming/accept`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields as Record<string, string>).toString() });
    expect((await send()).status).toBe(303);
    const again = await send();
    expect(again.status).toBe(409);
    await page.setContent(await again.text());
    const told = await page.evaluate(() => document.body.innerText);
    expect(told).toContain(`Não foi possível aceitar esta proposta. A fatura FT 2026/601 (vencimento ${payables[0].due_date}) já não tem proposta de pagamento antecipado: está aceite.`);
    for (const word of ['cpy_', 'allowed', 'accept does not apply']) expect(told).not.toContain(word);
    // a payable written off after its anchor defaulted: paid, as the supplier was, in both languages
    const id = payables[1].payable_id;
    for (const [action, body] of [['accept', {}], ['fund', {}], ['default', { reason: 'anchor insolvent' }], ['write_off', { reason: 'loss' }]] as const) expect((await api('POST', `/v1/confirming/payables/${id}/${action}`, body)).status).toBe(200);
    const fresh = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    for (const [lang, label] of [['pt-PT', 'Paga'], ['en', 'Paid']]) {
      await page.goto(fresh.url.replace('lang=pt-PT', `lang=${lang}`), { waitUntil: 'load' });
      expect(await page.$eval(`tr[id="${id}"] td[data-status]`, (td) => [td.getAttribute('data-status'), td.textContent])).toEqual(['funded', label]);
    }
    await page.close();
  });

  test('an altered link and an expired link show an error page; a form without its token is refused', async () => {
    const { p } = await programmeWithOffers();
    const link = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    const page = await browser.newPage();
    const tampered = link.url.replace(/token=([^&.]+)\.([^&]+)/, (_m: string, a: string, b: string) => `token=${a}.${b.slice(0, -2)}xx`);
    const r1 = await page.goto(tampered, { waitUntil: 'load' });
    expect(r1!.status()).toBe(403);
    expect(await page.evaluate(() => document.body.innerText)).toContain('Esta ligação não é válida');
    expect(await page.$$eval('[role=alert]', (a) => a.length)).toBe(1);
    await Bun.sleep(4_500); // PORTAL_LINK_TTL_SECONDS=4
    const r2 = await page.goto(link.url.replace('lang=pt-PT', 'lang=en'), { waitUntil: 'load' });
    expect(r2!.status()).toBe(410);
    expect(await page.evaluate(() => document.body.innerText)).toContain('This link has expired');
    await page.close();
    const forged = await fetch(`${server.base}/portal/confirming/accept`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x.y&payable_id=cpy_00000000-0000-7000-8000-000000000000&csrf=z', redirect: 'manual' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('content-type')).toContain('text/html');
  });

  test('a suspended tenant\'s links stop at once, as its keys do (page and accept); resumed, they work again', async () => {
    const { p, payables } = await programmeWithOffers('FT 2026/70');
    const link = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    const env = { DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '' };
    const [tenant] = JSON.parse((await runCli(['tenant', 'list', '--json'], env)).stdout) as { tenant_id: string }[];
    const page = await browser.newPage();
    try {
      const before = await page.goto(link.url, { waitUntil: 'load' });
      expect(before!.status()).toBe(200);
      // the accept form as the page has it (token, payable, CSRF), sent after the suspension
      const form = await page.evaluate(() => {
        const f = document.querySelector('form');
        const fields: [string, unknown][] = [...new (globalThis as any).FormData(f)];
        return new URLSearchParams(fields.map(([k, v]) => [k, String(v)] as [string, string])).toString();
      });
      expect((await runCli(['tenant', 'suspend', '--tenant', tenant!.tenant_id], env)).code).toBe(0);
      const suspended = await page.goto(link.url, { waitUntil: 'load' });
      expect(suspended!.status()).toBe(403);
      expect(await page.evaluate(() => document.body.innerText)).toContain('não está disponível');
      // not called an invalid link: the link is good, the programme is unavailable
      expect(await page.title()).toBe('Programa indisponível');
      expect(await page.evaluate(() => document.querySelector('h1')!.textContent)).toBe('Programa indisponível');
      expect(await page.evaluate(() => document.body.innerText)).not.toContain('FT 2026/70');
      const accept = await fetch(`${server.base}/portal/confirming/accept`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form, redirect: 'manual' });
      expect(accept.status).toBe(403);
      expect((await runCli(['tenant', 'resume', '--tenant', tenant!.tenant_id], env)).code).toBe(0);
      const listed = await api('GET', `/v1/confirming/anchor/${p.programme_id}/payables`);
      expect(listed.body.data.map((x: { status: string }) => x.status)).toEqual(payables.map(() => 'approved'));
      const resumed = await page.goto(link.url, { waitUntil: 'load' });
      expect(resumed!.status()).toBe(200);
    } finally {
      await page.close();
    }
  });

  test("a payable paid early stays paid on the supplier's page whatever the anchor does after (a default is between the bank and the anchor)", async () => {
    const { p, payables } = await programmeWithOffers('FT 2026/9');
    const id = payables[0].payable_id;
    for (const [action, body] of [['accept', {}], ['fund', {}], ['default', { reason: 'anchor missed the maturity payment' }]] as const)
      expect((await api('POST', `/v1/confirming/payables/${id}/${action}`, body)).status).toBe(200);
    expect((await api('GET', `/v1/confirming/payables/${id}`)).body.status).toBe('defaulted');
    const link = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    const page = await browser.newPage();
    try {
      const shown = async () => {
        expect((await page.goto(link.url, { waitUntil: 'load' }))!.status()).toBe(200);
        return page.evaluate((rowId: string) => {
          const cell = document.getElementById(rowId).querySelector('[data-status]');
          return { status: cell.getAttribute('data-status'), text: cell.textContent, page: document.body.innerText };
        }, id);
      };
      const defaulted = await shown();
      expect(defaulted).toMatchObject({ status: 'funded', text: 'Paga' });
      for (const word of ['incumprimento', 'Incobrável', 'defaulted']) expect(defaulted.page).not.toContain(word);
      expect((await api('POST', `/v1/confirming/payables/${id}/write_off`, { reason: 'anchor insolvent' })).status).toBe(200);
      expect(await shown()).toMatchObject({ status: 'funded', text: 'Paga' });
    } finally {
      await page.close();
    }
  });

  // (last: the server's one tenant is erased)
  test("an erased tenant's links stop as a suspended one's do: the page tells nothing of the programme", async () => {
    const { p } = await programmeWithOffers('FT 2026/81');
    const link = (await api('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000031`)).body;
    const env = { DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '' };
    const [tenant] = JSON.parse((await runCli(['tenant', 'list', '--json'], env)).stdout) as { tenant_id: string }[];
    const page = await browser.newPage();
    try {
      expect((await page.goto(link.url, { waitUntil: 'load' }))!.status()).toBe(200);
      expect((await runCli(['tenant', 'erase', '--tenant', tenant!.tenant_id, '--confirm'], env)).code).toBe(0);
      const erased = await page.goto(link.url, { waitUntil: 'load' });
      expect(erased!.status()).toBe(403);
      const told = await page.evaluate(() => document.body.innerText);
      expect(told).toContain('não está disponível');
      expect(told).not.toContain('Ligação inválida');
      for (const word of ['FT 2026/81', '599000031', p.programme_id]) expect(told).not.toContain(word);
    } finally {
      await page.close();
    }
  });
});

describe('the documentation pages in a browser', () => {
  test('/docs/credit-policy is shown as a page (not downloaded): its title, headings and tables as a reader sees them', async () => {
    const page = await browser.newPage();
    try {
      const res = await page.goto(`${server.base}/docs/credit-policy`, { waitUntil: 'load' });
      expect(res!.status()).toBe(200);
      expect(res!.headers()['content-type']).toBe('text/html; charset=utf-8');
      expect(await page.title()).toBe('Credit policy: decisions, limits and the spreads index');
      const headings = await page.$$eval('h2', (hs) => hs.map((h) => (h as unknown as { innerText: string }).innerText));
      expect(headings).toContain('1. Notched tier');
      expect(headings).toContain('9. Worked example');
      // the tier table as cells, not pipes
      const firstRow = await page.$$eval('table tr', (rows) => [...rows[1]!.querySelectorAll('td')].map((c) => (c as unknown as { innerText: string }).innerText));
      expect(firstRow).toEqual(['A+ / A / A-', '≤ 0.10 % / ≤ 0.20 % / ≤ 0.40 %', 'A (≤ 0.4 %)']);
      expect(await page.evaluate(() => document.body.innerText)).not.toContain('| Tier |');
    } finally {
      await page.close();
    }
  });
});
