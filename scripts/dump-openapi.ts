// Prints the OpenAPI document of the app (in-memory SQLite, nothing persisted). Used by CI's lint.
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createApp } from '../src/app';
import { createLogger } from '../src/lib/log';

const ctx = await createContext(loadConfig({ DATA_DIR: ':memory:', LOG_LEVEL: 'silent', SEED_DEMO_TENANT: 'false' }), { log: createLogger('silent') });
const app = createApp(ctx);
const res = await app.handle(new Request('http://localhost/openapi.json'));
process.stdout.write(JSON.stringify(await res.json(), null, 2) + '\n');
await ctx.close();
