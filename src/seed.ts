import { count } from 'drizzle-orm';
import { publicBaseUrl } from './config';
import type { AppContext } from './context';
import { SANDBOX_FIXTURES } from './features/score/fixtures';

/**
 * First start of an empty embedded database: create a demo tenant and print its sandbox key once.
 * The key is only ever shown here (only its hash is stored), so it cannot be printed again.
 */
export async function seedDemoTenant(ctx: AppContext, print: (s: string) => void): Promise<boolean> {
  if (ctx.database.dialect !== 'sqlite' || !ctx.config.seedDemoTenant) return false;
  const [row] = await ctx.database.db.select({ n: count() }).from(ctx.database.t.tenants);
  if ((row?.n ?? 0) > 0) return false;
  const created = await ctx.tenants.createTenant({ name: 'Demo tenant', plan: 'starter', env: 'sandbox', scopes: ['*'] });
  const nif = SANDBOX_FIXTURES.find((f) => f.outcome === 'tier_a_low_pd')?.nif ?? SANDBOX_FIXTURES[0]!.nif;
  const base = publicBaseUrl(ctx.config);
  print(
    [
      '',
      '  Sandbox ready. A demo tenant was created; its API key is shown this once:',
      '',
      `    ${created.api_key}`,
      '',
      '  Try it:',
      `    curl -s -X POST ${base}/v1/score -H "Authorization: Bearer ${created.api_key}" -H "Content-Type: application/json" -d '{"nif":"${nif}"}'`,
      '',
      `  API reference: ${base}/docs   Fixtures: ${base}/v1/sandbox/fixtures`,
      '',
    ].join('\n'),
  );
  return true;
}
