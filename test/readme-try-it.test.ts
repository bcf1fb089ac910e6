import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ROOT, spawnServer } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * README "Try it" works as printed (issue 17 item 13): its shell blocks are run in order with
 * `sh` against a freshly started sandbox (embedded SQLite, the key printed at first start), with
 * the webhook receiver it tells the reader to start. Only the port numbers are substituted.
 */
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Try it'), readme.indexOf('A wrong key gets'));
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

let dir: string;
let server: Awaited<ReturnType<typeof spawnServer>>;
let key: string;
let receiver: ReturnType<typeof Bun.spawn> | null = null;
let received = '';
const hookPort = freePort();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'try-it-'));
  server = await spawnServer({ DATA_DIR: dir, LOG_LEVEL: 'warn', SEED_DEMO_TENANT: 'true', DATABASE_URL: '', REDIS_URL: '' });
  key = /sk_test_[0-9a-f]{28}/.exec(server.output())?.[0] ?? '';
}, 30_000);
afterAll(async () => {
  receiver?.kill();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ports = (text: string) => text.replaceAll('http://localhost:3000', server.base).replace(/(:|port: )9000\b/g, `$1${hookPort}`);

async function sh(block: string) {
  const script = ports(block).replace(/^KEY=sk_test_\.\.\..*$/m, `KEY=${key}`);
  const p = Bun.spawn(['sh', '-c', script], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

describe('README: Try it', () => {
  test('uses nothing a fresh machine may lack (no uuidgen, no jq)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(section).not.toContain('uuidgen');
    expect(section).not.toMatch(/\| *jq\b/);
    expect(key).toMatch(/^sk_test_/);
  });

  test('every block runs in order against a started sandbox and does what the text says', async () => {
    const [basics, receiverBlock, webhooks, erp, rotate, gdpr] = blocks;
    // the first block defines API and KEY; the others are run in the same shell session, as a reader would
    const vars = basics!.split('\n').filter((l) => /^(API|KEY)=/.test(l)).join('\n') + '\n';
    const run = (b: string) => sh(vars + b.split('\n').filter((l) => !/^(API|KEY)=/.test(l)).join('\n'));

    const r0 = await run(basics!);
    expect(r0.code).toBe(0);
    expect(r0.out).not.toContain('"requestId"'); // no error body
    expect(r0.out).toContain('"tier":"A"');
    expect(r0.out).toContain('"overall"');

    // the receiver, as printed (one line of bun)
    const line = ports(receiverBlock!.trim());
    expect(line.startsWith("bun -e '")).toBe(true);
    receiver = Bun.spawn(['sh', '-c', `exec ${line}`], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
    (async () => {
      const dec = new TextDecoder();
      for await (const c of receiver!.stdout as unknown as AsyncIterable<Uint8Array>) received += dec.decode(c);
    })();
    for (let i = 0; i < 50; i++) {
      try {
        await fetch(`http://127.0.0.1:${hookPort}/`, { method: 'HEAD' });
        break;
      } catch {
        await Bun.sleep(100);
      }
    }

    const r1 = await run(webhooks!);
    expect(r1.code).toBe(0);
    expect(r1.out).toContain('"signing_secret":"whsec_');
    expect(r1.out).toMatch(/"events":\[[^\]]*"type":"score\.updated","nif":"599000082"[^\]]*"type":"deterioration\.alert","nif":"599000082"/);
    for (let i = 0; i < 100 && !received.includes('deterioration.alert'); i++) await Bun.sleep(100);
    expect(received).toContain('"type":"score.updated"');
    expect(received).toContain('"type":"deterioration.alert"');

    const r2 = await run(erp!);
    expect(r2.code).toBe(0);
    expect(r2.out).toContain('303 https://example.com/done?status=connected&provider=demo&customer_reference=cliente-1');
    expect(r2.out).toMatch(/"status":"succeeded","attempts":1,"invoices_count":50/);
    expect(r2.out).toContain('"provider_document_id":"demo-inv-000001"');

    const r3 = await run(rotate!);
    expect(r3.out).toMatch(/"api_key":"sk_test_[0-9a-f]{28}"/);

    const r4 = await run(gdpr!);
    expect(r4.code).toBe(0);
    expect(r4.out).toContain('"code":"live_key_required"');
    const exported = JSON.parse(readFileSync(join(dir, 'export.json'), 'utf8'));
    expect(exported.manifest.environments).toEqual(['sandbox']);
    expect(exported.end_of_export.complete).toBe(true);
  }, 60_000);
});

describe('README: Decisions', () => {
  test('its block runs as printed against a started sandbox', async () => {
    const decisions = readme.slice(readme.indexOf('## Decisions'), readme.indexOf('## ESG examples'));
    const [block] = [...decisions.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('"requestId"'); // no error body
    // "Try it" synced the demo books, where 599000023 is a customer: its payment record there
    // moves the answer away from the printed one (README says so), and names the provider
    expect(r.out).toMatch(/"decision_id":"dec_[0-9a-f-]{36}","nif":"599000023","score":\d+,"tier":"[A-E][+-]?"/);
    expect(r.out).toContain('"erp_source":"demo"');
    expect(r.out).toContain('"buyer_nif":"599000015"');
    expect(r.out).toContain('"tier":"B+","term_days":90');
    expect(r.out).toContain('"risk_level":"moderate"');
    expect(r.out).toContain('"min_tier":"C-"');
  });
});

describe('README: NIF lookup', () => {
  test('its block runs as printed against a started sandbox', async () => {
    const part = readme.slice(readme.indexOf('## NIF lookup'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('"requestId"');
    expect(r.out).toContain('"name":"Sandbox Beta, S.A."');
    expect(r.out).toContain('"valid":false,"check_digit_ok":false');
    expect(r.out).toContain('"code":"individual"');
  });
});

describe('README: AML screening', () => {
  test('its block runs as printed against a started sandbox (the UN list loaded at start)', async () => {
    const part = readme.slice(readme.indexOf('## AML screening'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('"requestId"');
    expect(r.out).toContain('"status":"match","matches":[{"list":"un","entry_id":"CDi.001","matched_name":"ERIC BADEGE"');
    expect(r.out).toContain('"status":"clear","matches":[]');
  });
});

describe('README: KYC', () => {
  test('its block runs as printed against a started sandbox', async () => {
    const part = readme.slice(readme.indexOf('## KYC'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('"requestId"');
    expect(r.out).toContain('"outcome":"pass"');
    expect(r.out).toContain('"outcome":"fail"');
  });
});

describe('README: reconciliation', () => {
  test('its block runs as printed against a started sandbox', async () => {
    const part = readme.slice(readme.indexOf('## Reconciliation'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('"requestId"');
    expect(r.out).toContain('"transaction_ids":["t1"],"invoice_ids":["i1"],"amount":123');
    expect(r.out).toContain('"transaction_ids":["t2"],"invoice_ids":["i2"],"amount":367.5');
    expect(r.out).toContain('"source":"demo/cliente-1"');
  });
});

describe('README: invoice QR', () => {
  test('its text example runs as printed against a started sandbox', async () => {
    const part = readme.slice(readme.indexOf('## Invoice QR codes'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const firstCall = block!.split('# {')[0]!; // the PDF line needs a file of the reader's own
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${firstCall}`);
    expect(r.code).toBe(0);
    expect(r.out).toContain('"checks":[],"valid":true,"source":"text"');
  });
});

describe('README: SAF-T', () => {
  test('its block runs as printed from the repository root', async () => {
    const part = readme.slice(readme.indexOf('## SAF-T'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`cd ${ROOT}\nAPI=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out.split('"hash_chain":"verified","valid":true,"bytes":144935').length).toBe(3); // raw and multipart
  });
});

describe('README: factoring', () => {
  test('its walkthrough runs as printed: created approved, funded, settled, the trail verified, then 409', async () => {
    const part = readme.slice(readme.indexOf('## Factoring'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/"operation_id":"fop_[0-9a-f-]{36}","status":"approved"/);
    expect(r.out).toContain('"status":"settled"');
    expect(r.out).toContain('"shortfall_cents":0');
    expect(r.out).toContain('"verified":true');
    expect(r.out).toContain('"code":"invalid_transition"');
  });
});

describe('README: capital', () => {
  test('its block runs as printed', async () => {
    const part = readme.slice(readme.indexOf('## Capital requirements'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).toContain('"regime":"crr2","parameters":{"scaling_factor":1.06');
    expect(r.out).toMatch(/"id":"loan-1".*"risk_weight":0\.978558/);
  });
});

describe('README: data-subject requests', () => {
  test('its block runs as printed: received, then completed by the job', async () => {
    const part = readme.slice(readme.indexOf('## Data-subject requests'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    // (the list's URL is quoted, as its query's "?" needs in zsh)
    const listLine = block!.split('\n').find((l) => l.startsWith('curl -s "$API/v1/gdpr/requests?'))!;
    const create = block!.slice(0, block!.indexOf(listLine));
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${create}`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/"request_id":"dsr_[0-9a-f-]{36}","type":"access","status":"received"/);
    let out = '';
    for (let i = 0; i < 50 && !out.includes('"status":"completed"'); i++) {
      await Bun.sleep(100);
      out = (await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${listLine}`)).out;
    }
    expect(out).toContain('"status":"completed"');
    expect(out).toContain('"bundle_url":"/v1/gdpr/requests/dsr_');
  });
});

describe('README: OAuth client credentials', () => {
  test('its block runs as printed: a client, a token with curl -u, a score with the token', async () => {
    const part = readme.slice(readme.indexOf('## OAuth 2.0 client credentials'), readme.indexOf('## ESG examples'));
    const [block] = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const r = await sh(`API=http://localhost:3000\nKEY=sk_test_...\n${block}`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/"client_id":"oc_[0-9a-f]{24}"/);
    expect(r.out).toContain('"score":825,"tier":"A"');
  });
});
