import { TypeCompiler } from '@sinclair/typebox/compiler';
import { t } from 'elysia';
import type { AppContext } from '../../context';
import { jsonFastPath } from '../../plugins/fast-path';
import { ScoreRequest, ScoreResponse } from './model';
import type { ScoreService } from './service';

type ScoreBody = { nif: string; customer_reference?: string; refresh?: 'cached_ok' | 'force_refresh' };

/**
 * POST /v1/score without Elysia's per-request lifecycle (plugins/fast-path.ts), because its
 * throughput is a target (#4, #8, #23).
 */
export function scoreFastPath(ctx: AppContext, service: ScoreService) {
  // unknown fields go to the Elysia route, which strips them (its normalisation); compiled from a
  // copy because Elysia marks the route's own schema object when it compiles the route
  const body = TypeCompiler.Compile(t.Object(ScoreRequest.properties, { additionalProperties: false }));
  const response = TypeCompiler.Compile(ScoreResponse);
  // a cached result is one shared, frozen object per stored row and language (ScoreService):
  // checked against the schema and serialised once, into an immutable Blob that every answer of it
  // shares (a string body is copied into each Response: ~1 KB more garbage per request)
  const serialised = new WeakMap<object, Blob>();
  return jsonFastPath<ScoreBody, object>(ctx, {
    route: '/v1/score',
    scope: 'score',
    accept(input) {
      const req = input as ScoreBody;
      if (req.refresh === undefined) req.refresh = 'cached_ok'; // (null is not absent: the Elysia route refuses it)
      return body.Check(req) ? req : null;
    },
    answer: (caller, req, lang) => service.score(caller, req, lang),
    serialise(result) {
      let json = serialised.get(result);
      if (json === undefined) {
        if (!response.Check(result)) throw new Error('score response does not match its schema');
        // a fresh score's answer is new and answered once: its text as it is
        if (!Object.isFrozen(result)) return JSON.stringify(result);
        serialised.set(result, (json = new Blob([JSON.stringify(result)])));
      }
      return json;
    },
  });
}
