import { TypeCompiler } from '@sinclair/typebox/compiler';
import { t } from 'elysia';
import type { AppContext } from '../../context';
import { jsonFastPath } from '../../plugins/fast-path';
import { isWholeCents } from '../../lib/schemas';
import { DecisionRequest } from './model';
import type { DecisionBody, DecisionService } from './service';

type Decided = Awaited<ReturnType<DecisionService['decide']>>;

/**
 * POST /v1/decision without Elysia's per-request lifecycle (plugins/fast-path.ts): a repeated
 * decision is answered from memory and its throughput is a target (#18, #23). Only the plain case:
 * a body the route's schema takes whole, with no field it does not know at either level, in whole
 * cents, of a Portuguese company; anything else (and every error the route judges before the
 * service) goes to the Elysia route, which reports every problem at once.
 */
export function decisionFastPath(ctx: AppContext, service: DecisionService) {
  // compiled from copies: Elysia marks the route's own schema objects when it compiles the route
  const context = DecisionRequest.properties.context;
  const body = TypeCompiler.Compile(t.Object({ ...DecisionRequest.properties, context: t.Object(context.properties, { additionalProperties: false }) }, { additionalProperties: false }));
  // a decision answered from memory is one shared object (DecisionService): its text serialised
  // once into an immutable Blob every answer of it shares (a string body is copied into each Response)
  const shared = new WeakMap<Decided, Blob>();
  return jsonFastPath<DecisionBody, Decided>(ctx, {
    route: '/v1/decision',
    scope: 'score',
    accept(input) {
      if (!body.Check(input)) return null;
      const req = input as DecisionBody;
      return (req.country === undefined || req.country.toUpperCase() === 'PT') && isWholeCents(req.context.amount_eur) ? req : null;
    },
    answer: (caller, req, lang) => service.decide(caller, req, performance.now(), lang),
    // the text the service stored, answered as it is (the Elysia route's jsonAnswer: the schema
    // documents it, the route's tests check the shape)
    serialise(decided) {
      if (decided.body.cache !== 'cached') return decided.text;
      let blob = shared.get(decided);
      if (blob === undefined) shared.set(decided, (blob = new Blob([decided.text])));
      return blob;
    },
  });
}
