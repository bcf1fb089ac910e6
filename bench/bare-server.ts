// The reference: a bare Elysia JSON POST with TypeBox validation, nothing else.
import { Elysia, t } from 'elysia';
new Elysia()
  .post('/bare', ({ body }) => ({ ok: true, nif: body.nif }), { body: t.Object({ nif: t.String({ pattern: '^[0-9]{9}$' }) }) })
  .get('/bare', () => ({ ok: true }))
  .listen(Number(process.env.PORT));
