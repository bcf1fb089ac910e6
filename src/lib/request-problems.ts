import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { fieldProblems, isJsonObject, NOT_AN_OBJECT, unknownFields, type FieldError } from './errors';
import { describe } from '../plugins/http-errors';

/** a hostile body (100 000 empty items, as many unknown keys) is not walked whole */
const MAX_SCHEMA_ERRORS = 256;

/**
 * Every problem of a request body at once, for a route that judges its body in its `transform`
 * (after the key, before Elysia's own validation, which stops at the schema): the schema's,
 * worded as every route's (`describe`), then the route's own checks; one message per path, the
 * first given. Unknown fields are ignored when nothing else is wrong, and listed beside real
 * problems (they may be misspelt ones) — unless `refuseUnknown`, where they are problems themselves.
 */
export class RequestProblems {
  readonly fields: FieldError[] = [];
  private readonly paths = new Set<string>();

  /**
   * the body's schema problems; `body` judged as given, or as `judged` (e.g. a list cut to its
   * limit + 1). `compiled`: the schema compiled, checked first (a hot path: the error list, which
   * walks generators, only for a body that fails).
   */
  constructor(
    private readonly schema: TSchema & { properties?: Record<string, unknown> },
    private readonly body: unknown,
    private readonly o: { judged?: unknown; refuseUnknown?: boolean; compiled?: { Check(value: unknown): boolean } } = {},
  ) {
    if (!isJsonObject(body)) {
      this.add(NOT_AN_OBJECT);
      return;
    }
    const judged = o.judged ?? body;
    // a body that passes the compiled check has no schema problem; a closed one's unknown fields
    // are then all there is to look for (the check may let them through)
    if (o.compiled?.Check(judged)) {
      if (o.refuseUnknown) for (const path of strayFields(schema, judged)) this.add({ path, message: NOT_A_FIELD });
      return;
    }
    const errors: ValueError[] = [];
    for (const e of Value.Errors(schema, judged)) if (errors.push(e) >= MAX_SCHEMA_ERRORS) break;
    // a closed schema's unknown field is ignored unless something else is wrong (`describe` says so)
    const real = errors.some((e) => e.type !== ValueErrorType.ObjectAdditionalProperties);
    for (const e of real ? errors : []) this.add({ path: pathOf(e), message: o.refuseUnknown && e.type === ValueErrorType.ObjectAdditionalProperties ? NOT_A_FIELD : describe(e) });
    if (o.refuseUnknown) for (const path of strayFields(schema, o.judged ?? body)) this.add({ path, message: NOT_A_FIELD });
  }

  /** whether the body is an object (the route's own checks read it) */
  get object(): Record<string, unknown> | null {
    return isJsonObject(this.body) ? this.body : null;
  }
  has(path: string) {
    return this.paths.has(path);
  }
  add(f: FieldError) {
    if (this.paths.has(f.path)) return;
    this.paths.add(f.path);
    this.fields.push(f);
  }
  /**
   * The fields of an item (at `at`, e.g. `invoices.3`) that its own checks may read: the schema's
   * properties that hold a value of their type (checked here: the error list is capped, so a field
   * no problem names may not have been judged at all) and that no problem names.
   */
  typedFields(itemSchema: TSchema & { properties?: Record<string, TSchema> }, item: Record<string, unknown>, at: string): Record<string, unknown> {
    const props = itemSchema.properties ?? {};
    const fieldPath = (k: string) => (at ? `${at}.${k}` : k);
    const named = (k: string) => this.fields.some((f) => f.path === fieldPath(k) || f.path.startsWith(`${fieldPath(k)}.`));
    return Object.fromEntries(Object.entries(item).filter(([k, v]) => Object.hasOwn(props, k) && !named(k) && Value.Check(props[k]!, v)));
  }

  /** every problem found, unknown top-level fields listed beside them */
  done(): FieldError[] {
    if (this.fields.length && !this.o.refuseUnknown && this.schema.properties) for (const f of unknownFields(this.body, this.schema.properties)) this.add(f);
    return this.fields;
  }
}

/** a refused unknown field (a route whose every field counts: a misspelt one would change the answer) */
export const NOT_A_FIELD = 'is not a field of this request';

/** a TypeBox error's JSON pointer as a field path (`/invoices/0/amount` → `invoices.0.amount`) */
export const pathOf = (e: ValueError) => e.path.replace(/^\//, '').replaceAll('/', '.') || '(body)';

type Node = { type?: unknown; properties?: Record<string, Node>; items?: Node; anyOf?: Node[]; patternProperties?: unknown; additionalProperties?: unknown };

/**
 * The paths of fields a closed request does not have, at any depth: an object schema's keys not
 * among its properties (own keys: `in` would know every object's `constructor`), into its
 * properties, array items and the object member of a union (a nullable object). At most 50.
 */
export function strayFields(schema: TSchema, value: unknown, path = '', out: string[] = []): string[] {
  const node = schema as Node;
  if (out.length >= 50) return out;
  if (Array.isArray(value) && node.items) value.forEach((v, i) => strayFields(node.items as TSchema, v, path ? `${path}.${i}` : String(i), out));
  else if (isJsonObject(value) && node.anyOf) {
    const member = node.anyOf.find((m) => m.type === 'object');
    if (member) strayFields(member as TSchema, value, path, out);
  } else if (isJsonObject(value) && node.type === 'object' && node.properties && !node.patternProperties && typeof node.additionalProperties !== 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (!Object.hasOwn(node.properties, k)) {
        if (out.length < 50) out.push(at);
      } else strayFields(node.properties[k] as TSchema, v, at, out);
    }
  }
  return out;
}

/**
 * A route's `transform` for a closed body (every field counts: a misspelt one would change the
 * answer): its problems at once, unknown fields among them. An absent optional body passes.
 */
export const closedBody = (schema: TSchema) => {
  // compiled on first use (after every format is registered): a valid body is checked by it, and
  // only a failing one walked by TypeBox's error iterator
  let compiled: ReturnType<typeof TypeCompiler.Compile> | undefined;
  return ({ body }: { body: unknown }) => {
    if (body === undefined || body === null) return;
    const fields = new RequestProblems(schema, body, { refuseUnknown: true, compiled: (compiled ??= TypeCompiler.Compile(schema)) }).done();
    if (fields.length) throw fieldProblems(fields);
  };
};
