import { t } from 'elysia';
import { CustomerReference, DateTime, Int, PageLimit } from '../../lib/schemas';
import { NIF_SHAPE } from '../../lib/nif';

export const ScreenRequest = t.Object({
  name: t.String({ minLength: 1, maxLength: 300, description: 'The name to screen (a person or an organisation)' }),
  type: t.Optional(t.Union([t.Literal('person'), t.Literal('organisation'), t.Literal('any')], { default: 'any', description: 'A list entry of the other type scores 0.1 lower (an identical name of the other type is a potential match)' })),
  birth_date: t.Optional(t.String({ format: 'date-or-year', description: 'YYYY-MM-DD or YYYY: agreeing raises a person\'s score by 0.03, disagreeing lowers it by 0.15' })),
  nationality: t.Optional(t.String({ format: 'country', description: 'ISO 3166-1 alpha-2' })),
  country: t.Optional(t.String({ format: 'country', description: 'ISO 3166-1 alpha-2 (of an organisation; nationality is used when both are given)' })),
  nif: t.Optional(t.String({ pattern: NIF_SHAPE.source, format: 'nif', description: 'The subject\'s Portuguese tax number (NIF/NIPC), exactly 9 digits, the last its mod-11 check digit (one that fails it is 422 invalid_nif): recorded with the screening' })),
  min_score: t.Optional(t.Number({ minimum: 0, maximum: 0.97, default: 0.85, description: 'Matches below this score are not reported (default 0.85); at most 0.97, the score of a match, so a match is always reported' })),
  lists: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 16 }), { minItems: 1, maxItems: 10, uniqueItems: true, description: 'Lists to screen against (default: every list loaded: un, eu)' })),
  monitor: t.Optional(t.Boolean({ default: false, description: 'Keep the subject for re-screening when a list is updated' })),
  customer_reference: t.Optional(CustomerReference),
});

export const ScreenMatch = t.Object({
  list: t.String(),
  entry_id: t.String({ description: 'The list\'s own reference (UN: CDi.001; EU: EU.27.28)' }),
  matched_name: t.String(),
  entry_type: t.Union([t.Literal('person'), t.Literal('organisation')]),
  score: t.Number({ minimum: 0, maximum: 1 }),
  match_type: t.Union([t.Literal('exact'), t.Literal('alias'), t.Literal('fuzzy')]),
  explanation: t.Object({
    summary: t.String(),
    tokens: t.Array(t.Object({ query: t.String(), matched: t.String(), similarity: t.Number() })),
    unmatched_tokens: t.Array(t.String()),
    name_score: t.Number({ description: 'The name\'s similarity, times 0.9 for an alias the list calls low-quality (UN) or weak (EU)' }),
    alias_quality: t.Union([t.Literal('good'), t.Literal('low'), t.Literal('strong'), t.Literal('weak'), t.Null()], { description: 'The list\'s quality of the matched alias (UN good/low, EU strong/weak); null for a primary or original-script name' }),
    attributes: t.Object({
      birth_date: t.Union([t.Literal('agrees'), t.Literal('disagrees'), t.Literal('unknown')]),
      country: t.Union([t.Literal('agrees'), t.Literal('disagrees'), t.Literal('unknown')]),
      type: t.Union([t.Literal('agrees'), t.Literal('disagrees'), t.Literal('unknown')]),
    }),
  }),
  programme: t.Union([t.String(), t.Null()]),
  listed_on: t.Union([t.String(), t.Null()]),
});

export const ScreenResponse = t.Object({
  screening_id: t.String(),
  status: t.Union([t.Literal('clear'), t.Literal('potential_match'), t.Literal('match')], { description: 'match: a score ≥ 0.97; potential_match: ≥ min_score; clear: none' }),
  matches: t.Array(ScreenMatch),
  lists: t.Array(t.Object({ name: t.String(), generated_at: DateTime, loaded_at: DateTime, entries: Int() })),
  query: t.Object({ name: t.String(), type: t.String(), birth_date: t.Union([t.String(), t.Null()]), country: t.Union([t.String(), t.Null()]), nif: t.Union([t.String(), t.Null()]), min_score: t.Number() }),
  monitor: t.Boolean(),
  screened_at: DateTime,
  synthetic: t.Boolean(),
  previous_screening_id: t.Optional(t.String({ description: 'A re-screen of a monitored subject after a list update: the screening it follows' })),
  customer_reference: t.Optional(t.String()),
});
export type ScreenResponseBody = typeof ScreenResponse.static;

export const ScreeningListQuery = t.Object({
  status: t.Optional(t.Union([t.Literal('clear'), t.Literal('potential_match'), t.Literal('match')])),
  limit: PageLimit,
  cursor: t.Optional(t.String({ pattern: '^scr_[0-9a-f-]{36}$' })),
});
export const ScreeningIdParams = t.Object({ id: t.String({ pattern: '^scr_[0-9a-f-]{36}$' }) });
