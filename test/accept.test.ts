/**
 * Content negotiation of the routes that answer JSON or a document (lib/accept.ts), RFC 9110
 * §12.5.1: the most specific range names a type's weight, q=0 refuses it, a weight that is no number
 * counts for nothing, JSON wins ties unless a document is named more specifically.
 */
import { describe, expect, test } from 'bun:test';
import { acceptsJsonOr, negotiate, preferredDocument } from '../src/lib/accept';

const PDF = ['application/pdf'];
const CHARTS = ['image/svg+xml', 'image/png'];

describe('negotiate', () => {
  test.each([
    [undefined, PDF, true, null],
    ['', PDF, true, null],
    [' , ,', PDF, true, null], // only empty list elements: as if absent
    ['*/*', PDF, true, null], // a wildcard alone is JSON
    ['application/*', PDF, true, null],
    ['application/json;charset=utf-8', PDF, true, null],
    ['application/pdf', PDF, true, 'application/pdf'],
    ['application/pdf, application/json', PDF, true, 'application/pdf'], // named alike: the document
    ['Application/PDF;Q=0.5, application/json;q=0.4', PDF, true, 'application/pdf'],
    ['application/json;q=0.9, application/pdf;q=0.5', PDF, true, null],
    ['application/json;q=0, */*', PDF, true, 'application/pdf'], // JSON refused by name, the PDF by the wildcard
    ['application/json;q=0, application/*', PDF, true, 'application/pdf'],
    ['text/html', PDF, false, null],
    ['text/html, */*;q=0.1', PDF, true, null],
    ['application/pdf;q=0, text/html', PDF, false, null],
    ['application/pdf;q=0, */*', PDF, true, null], // the PDF refused by name: JSON by the wildcard
    ['application/json; q = 0', PDF, false, null], // spaces around "=": still its weight
    ['application/json;q=high', PDF, false, null], // not a number: the part counts for nothing
    ['application/pdf;q=1.5', PDF, true, 'application/pdf'], // capped to 1
    ['application/pdf;q=0.0001', PDF, true, 'application/pdf'],
    ['text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2', PDF, true, null], // Java's HttpURLConnection default
    ['application/pdf;q=0.001', PDF, true, 'application/pdf'],
    ['image/*', CHARTS, true, 'image/svg+xml'], // the route's first chart
    ['image/*, application/json;q=0', CHARTS, true, 'image/svg+xml'],
    ['image/png;q=0.2, text/html', CHARTS, true, 'image/png'],
    ['image/svg+xml;q=0, application/json', CHARTS, true, null],
    ['image/*', PDF, false, null],
  ] as [string | undefined, string[], boolean, string | null][])('%p of %p: acceptable %p, document %p', (accept, documents, acceptable, document) => {
    expect(negotiate(accept, documents)).toEqual({ acceptable, document });
    expect(acceptsJsonOr(accept, documents)).toBe(acceptable);
    expect(preferredDocument(accept, documents)).toBe(document);
  });
});
