// The reference: a bare Elysia JSON POST with TypeBox validation, nothing else. /bare-turn-end is
// the same with its answer released at the end of the event-loop turn (src/lib/turn-end.ts), to
// show what that trick of the score fast path is worth on its own.
import { Elysia, t } from 'elysia';
import { turnEnd } from '../src/lib/turn-end';

const body = t.Object({ nif: t.String({ pattern: '^[0-9]{9}$' }) });
new Elysia()
  .post('/bare', ({ body }) => ({ ok: true, nif: body.nif }), { body })
  .post('/bare-turn-end', async ({ body }) => (await turnEnd(), { ok: true, nif: body.nif }), { body })
  .get('/bare', () => ({ ok: true }))
  .listen(Number(process.env.PORT));
