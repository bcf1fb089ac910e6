/**
 * The string formats the app's schemas use are checked by compiled patterns, whatever module loads
 * last: @elysiajs/openapi replaces TypeBox's `uuid`, `email` and `date` with Zod checks that build
 * a schema on every value (~6 µs a check, on every answer with an id). What they accept is the same.
 */
import { describe, expect, test } from 'bun:test';
import { FormatRegistry } from '@sinclair/typebox';
import { createApp } from '../src/app';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { FORMAT_PATTERNS, isRequestDate, isRfc3339DateTime, RequestDate } from '../src/lib/schemas';
import { makeApp } from './helpers';

const samples: Record<string, [string, boolean][]> = {
  uuid: [
    ['0191e5c4-1c2b-7cde-8f00-123456789abc', true], // v7, as the service issues
    ['0191E5C4-1C2B-7CDE-BF00-123456789ABC', true],
    ['6ba7b810-9dad-11d1-80b4-00c04fd430c8', true], // v1
    ['00000000-0000-0000-0000-000000000000', true],
    ['ffffffff-ffff-ffff-ffff-ffffffffffff', true],
    ['0191e5c4-1c2b-9cde-8f00-123456789abc', false], // version 9
    ['0191e5c4-1c2b-7cde-cf00-123456789abc', false], // variant bits
    ['0191e5c41c2b7cde8f00123456789abc', false],
    ['urn:uuid:0191e5c4-1c2b-7cde-8f00-123456789abc', false],
    ['0191e5c4-1c2b-7cde-8f00-123456789abc\n', false],
    ['', false],
  ],
  email: [
    ['ana.silva@empresa.pt', true],
    ["o'neil+tag@sub.example.co.uk", true],
    ['.ana@empresa.pt', false],
    ['ana..silva@empresa.pt', false],
    ['ana@empresa', false],
    ['ana@-empresa.pt', false],
    ['ana silva@empresa.pt', false],
    ['ana@empresa.pt\n', false],
  ],
  date: [
    ['2026-11-27', true],
    ['2024-02-29', true],
    ['2000-02-29', true],
    ['2026-02-29', false],
    ['1900-02-29', false],
    ['2026-04-31', false],
    ['2026-13-01', false],
    ['2026-11-27T00:00:00Z', false],
    ['26-11-27', false],
  ],
};

describe('string formats', () => {
  test('after the app (and @elysiajs/openapi) loaded, uuid, email, date and date-time are the compiled checks; request dates within 1900–2199', () => {
    createApp; // the import above loaded the app's modules
    for (const [format, pattern] of Object.entries(FORMAT_PATTERNS)) {
      const check = FormatRegistry.Get(format)!;
      expect(check.toString(), format).toContain('pattern.test');
      for (const [value, ok] of samples[format]!) {
        expect(check(value), `${format} ${JSON.stringify(value)}`).toBe(ok);
        expect(pattern.test(value)).toBe(ok);
      }
    }
    expect(FormatRegistry.Get('date-time')).toBe(isRfc3339DateTime);
    // calendar dates outside 1900–2199 are no date of a request (RequestDate: the format and a pattern), while
    // answers keep the plain format (a company incorporated in 1880)
    const requestDate = TypeCompiler.Compile(RequestDate());
    for (const [value, ok] of [['1900-01-01', true], ['2199-12-31', true], ['1899-12-31', false], ['2200-01-01', false], ['0000-01-01', false], ['9999-12-31', false], ['2026-02-30', false]] as const) {
      expect(isRequestDate(value), value).toBe(ok);
      expect(requestDate.Check(value), value).toBe(ok);
    }
    expect(FormatRegistry.Get('date')!('1880-05-01')).toBe(true);
    // date-time: leap days by the Gregorian rule (year 0 included), hours, minutes, seconds and offsets in range
    for (const [value, ok] of [
      ['2024-02-29T00:00:00Z', true], ['2023-02-29T00:00:00Z', false], ['2000-02-29t12:00:00z', true], ['1900-02-29T00:00:00Z', false],
      ['0000-02-29T00:00:00Z', true], ['2026-04-31T00:00:00Z', false], ['2026-12-31 23:59:59.123456+14:00', true], ['2026-01-01T24:00:00Z', false],
      ['2026-01-01T00:60:00Z', false], ['2026-01-01T00:00:60Z', false], ['2026-01-01T00:00:00+24:00', false], ['2026-01-01T00:00:00-01:60', false],
      ['2026-13-01T00:00:00Z', false], ['2026-00-01T00:00:00Z', false], ['2026-01-00T00:00:00Z', false], ['2026-01-01T00:00:00', false],
    ] as const)
      expect(isRfc3339DateTime(value), value).toBe(ok);
  });

  test('a request field with a bad format is still refused with its path, a good one is not', async () => {
    const h = await makeApp();
    try {
      const { api_key } = await h.tenant();
      const source = { provider: 'moloni', customer_reference: 'c1' };
      const forecast = await h.json('POST', '/v1/forecast', { key: api_key, body: { source, as_of: '2026-02-30' } });
      expect(forecast.status).toBe(422);
      expect(forecast.body).toMatchObject({ code: 'validation_failed', status: 422 });
      expect(forecast.body.fields.map((f: { path: string }) => f.path)).toEqual(['as_of']);
      const good = await h.json('POST', '/v1/forecast', { key: api_key, body: { source, as_of: '2024-02-29' } });
      expect(good.status).not.toBe(422);
    } finally {
      await h.close();
    }
  });
});
