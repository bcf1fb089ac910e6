/**
 * Streaming parsers of the sanctions lists as published (REFERENCE §10), with saxes: the UN
 * Security Council consolidated list (XML) and the EU consolidated financial sanctions list
 * (FSF XML 1.1). Each entry is handed to `onEntry` as soon as it is read, so a list of tens of
 * megabytes is loaded in constant memory. A file that is not well-formed, or not the expected
 * format, throws ListFormatError.
 */
import { SaxesParser } from 'saxes';
import { countryCode } from './countries';

export type ListName = 'un' | 'eu';

export interface ListName_ {
  name: string;
  kind: 'primary' | 'alias' | 'original_script';
  /** UN alias QUALITY (good | low); EU nameAlias strong (strong | weak) */
  quality: 'good' | 'low' | 'strong' | 'weak' | null;
}

export interface BirthInfo {
  date: string | null;
  year: number | null;
  from_year: number | null;
  to_year: number | null;
  /** the list says the date is approximate (UN TYPE_OF_DATE APPROXIMATELY, EU circa): its year is what counts */
  approximate?: boolean;
}

export interface ListEntry {
  list: ListName;
  /** the list's own reference: CDi.001 (UN), EU.27.28 (EU) */
  entry_id: string;
  entry_type: 'person' | 'organisation';
  names: ListName_[];
  births: BirthInfo[];
  /** ISO 3166-1 alpha-2 where known (nationality, citizenship, address countries) */
  countries: string[];
  programme: string | null;
  listed_on: string | null;
}

export class ListFormatError extends Error {}

type Chunks = AsyncIterable<string | Uint8Array>;

async function feed(parser: SaxesParser, chunks: Chunks) {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of chunks) parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    parser.write(decoder.decode());
    parser.close();
  } catch (err) {
    if (err instanceof ListFormatError) throw err;
    throw new ListFormatError(`not a well-formed XML file: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** Feeds the file to the parser, handing the entries it completed to onEntry between chunks (awaited: back-pressure). */
async function feedEntries(parser: SaxesParser, chunks: Chunks, pending: ListEntry[], onEntry: (e: ListEntry) => void | Promise<void>) {
  const drain = async () => {
    while (pending.length) await onEntry(pending.shift()!);
  };
  await feed(parser, (async function* () {
    for await (const c of chunks) {
      yield c;
      await drain();
    }
  })());
  await drain();
}

const clean = (s: string) => s.replace(/\s+/g, ' ').trim();
const yearOf = (s: string | undefined) => (s && /^\d{4}$/.test(s.trim()) ? Number(s.trim()) : null);

/** The UN consolidated list. Returns its dateGenerated; entries go to onEntry. */
export async function parseUnList(chunks: Chunks, onEntry: (e: ListEntry) => void | Promise<void>): Promise<{ generated_at: string }> {
  const parser = new SaxesParser();
  let generatedAt: string | null = null;
  let rootSeen = false;
  const path: string[] = [];
  let text = '';
  let entry: ListEntry | null = null;
  let nameParts: string[] = [];
  let alias: { quality: string; name: string } | null = null;
  let birth: { type: string; date: string; year: string; from: string; to: string } | null = null;
  const pending: ListEntry[] = [];

  parser.on('opentag', (tag) => {
    path.push(tag.name);
    text = '';
    if (path.length === 1) {
      if (tag.name !== 'CONSOLIDATED_LIST') throw new ListFormatError(`not the UN consolidated list (root element ${tag.name}, expected CONSOLIDATED_LIST)`);
      rootSeen = true;
      generatedAt = (tag.attributes.dateGenerated as string) ?? null;
    }
    if (tag.name === 'INDIVIDUAL' || tag.name === 'ENTITY') {
      entry = { list: 'un', entry_id: '', entry_type: tag.name === 'INDIVIDUAL' ? 'person' : 'organisation', names: [], births: [], countries: [], programme: null, listed_on: null };
      nameParts = [];
    } else if (tag.name === 'INDIVIDUAL_ALIAS' || tag.name === 'ENTITY_ALIAS') alias = { quality: '', name: '' };
    else if (tag.name === 'INDIVIDUAL_DATE_OF_BIRTH') birth = { type: '', date: '', year: '', from: '', to: '' };
  });
  parser.on('text', (t) => (text += t));
  parser.on('cdata', (t) => (text += t));
  parser.on('closetag', (tag) => {
    const name = tag.name;
    const parent = path[path.length - 2];
    const value = clean(text);
    if (entry) {
      if (parent === 'INDIVIDUAL' || parent === 'ENTITY') {
        if (/^(FIRST|SECOND|THIRD|FOURTH)_NAME$/.test(name) && value) nameParts[Number({ FIRST_NAME: 0, SECOND_NAME: 1, THIRD_NAME: 2, FOURTH_NAME: 3 }[name as 'FIRST_NAME'])] = value;
        else if (name === 'REFERENCE_NUMBER') entry.entry_id = value;
        else if (name === 'UN_LIST_TYPE') entry.programme = value || null;
        else if (name === 'LISTED_ON') entry.listed_on = value || null;
        else if (name === 'NAME_ORIGINAL_SCRIPT' && value) entry.names.push({ name: value, kind: 'original_script', quality: null });
      } else if (parent === 'NATIONALITY' && name === 'VALUE') {
        const c = countryCode(value);
        if (c && !entry.countries.includes(c)) entry.countries.push(c);
      } else if ((parent === 'ENTITY_ADDRESS' || parent === 'INDIVIDUAL_ADDRESS') && name === 'COUNTRY' && entry.entry_type === 'organisation') {
        const c = countryCode(value);
        if (c && !entry.countries.includes(c)) entry.countries.push(c);
      } else if (alias && (parent === 'INDIVIDUAL_ALIAS' || parent === 'ENTITY_ALIAS')) {
        if (name === 'QUALITY') alias.quality = value.toLowerCase();
        else if (name === 'ALIAS_NAME') alias.name = value;
      } else if (birth && parent === 'INDIVIDUAL_DATE_OF_BIRTH') {
        if (name === 'TYPE_OF_DATE') birth.type = value;
        else if (name === 'DATE') birth.date = value;
        else if (name === 'YEAR') birth.year = value;
        else if (name === 'FROM_YEAR') birth.from = value;
        else if (name === 'TO_YEAR') birth.to = value;
      }
      if ((name === 'INDIVIDUAL_ALIAS' || name === 'ENTITY_ALIAS') && alias) {
        // one ALIAS_NAME may hold several names, "A; B" (27 in the UN file): each is an alias of its own
        const quality = alias.quality === 'good' ? 'good' : alias.quality === 'low' ? 'low' : null;
        for (const one of alias.name.split(';').map(clean)) if (one) entry.names.push({ name: one, kind: 'alias', quality });
        alias = null;
      } else if (name === 'INDIVIDUAL_DATE_OF_BIRTH' && birth) {
        const date = /^\d{4}-\d{2}-\d{2}/.test(birth.date) ? birth.date.slice(0, 10) : null;
        const b: BirthInfo = { date, year: date ? Number(date.slice(0, 4)) : yearOf(birth.year), from_year: yearOf(birth.from), to_year: yearOf(birth.to), ...(birth.type.toUpperCase() === 'APPROXIMATELY' ? { approximate: true } : {}) };
        if (b.date || b.year || b.from_year || b.to_year) entry.births.push(b);
        birth = null;
      } else if (name === 'INDIVIDUAL' || name === 'ENTITY') {
        const primary = nameParts.filter(Boolean).join(' ');
        if (!entry.entry_id || !primary) throw new ListFormatError(`an ${name} without REFERENCE_NUMBER or name`);
        // an entity's name may be two names, "A (X) ; B (Y)": the first is the name, the rest aliases
        const [first, ...others] = primary.split(';').map(clean).filter(Boolean);
        entry.names.unshift({ name: first ?? primary, kind: 'primary', quality: null }, ...others.map((name) => ({ name, kind: 'alias' as const, quality: null })));
        pending.push(entry);
        entry = null;
      }
    }
    path.pop();
    text = '';
  });
  await feedEntries(parser, chunks, pending, onEntry);
  if (!rootSeen || !generatedAt) throw new ListFormatError('not the UN consolidated list (no CONSOLIDATED_LIST dateGenerated)');
  return { generated_at: new Date(generatedAt).toISOString() };
}

/** The EU consolidated financial sanctions list (FSF XML 1.1). Returns its generationDate. */
export async function parseEuList(chunks: Chunks, onEntry: (e: ListEntry) => void | Promise<void>): Promise<{ generated_at: string }> {
  const parser = new SaxesParser({ xmlns: true });
  let generatedAt: string | null = null;
  let rootSeen = false;
  let depth = 0;
  let entry: ListEntry | null = null;
  const pending: ListEntry[] = [];
  const attr = (tag: { attributes: Record<string, unknown> }, name: string) => {
    const a = tag.attributes[name] as { value?: string } | string | undefined;
    return typeof a === 'string' ? a : (a?.value ?? '');
  };
  parser.on('opentag', (tag) => {
    depth++;
    const local = tag.local;
    if (depth === 1) {
      if (local !== 'export') throw new ListFormatError(`not the EU FSF list (root element ${tag.name}, expected export)`);
      rootSeen = true;
      generatedAt = attr(tag, 'generationDate') || null;
      return;
    }
    if (local === 'sanctionEntity') {
      entry = { list: 'eu', entry_id: attr(tag, 'euReferenceNumber'), entry_type: 'organisation', names: [], births: [], countries: [], programme: null, listed_on: attr(tag, 'designationDate') || null };
      return;
    }
    if (!entry) return;
    if (local === 'regulation' && !entry.programme) entry.programme = attr(tag, 'programme') || null;
    else if (local === 'subjectType') entry.entry_type = attr(tag, 'code') === 'person' ? 'person' : 'organisation';
    else if (local === 'nameAlias') {
      const whole = attr(tag, 'wholeName') || [attr(tag, 'firstName'), attr(tag, 'middleName'), attr(tag, 'lastName')].filter(Boolean).join(' ');
      if (whole.trim()) entry.names.push({ name: clean(whole), kind: entry.names.length ? 'alias' : 'primary', quality: attr(tag, 'strong') === 'false' ? 'weak' : 'strong' });
    } else if (local === 'citizenship' || local === 'address') {
      const c = countryCode(attr(tag, 'countryIso2Code'));
      if (c && c !== '00' && !entry.countries.includes(c)) entry.countries.push(c);
    } else if (local === 'birthdate') {
      const d = attr(tag, 'birthdate');
      const date = /^\d{4}-\d{2}-\d{2}$/.test(d) ? d : null;
      const year = date ? Number(date.slice(0, 4)) : yearOf(attr(tag, 'year'));
      if (date || year) entry.births.push({ date, year, from_year: null, to_year: null, ...(attr(tag, 'circa') === 'true' ? { approximate: true } : {}) });
    }
  });
  parser.on('closetag', (tag) => {
    depth--;
    if (tag.local === 'sanctionEntity' && entry) {
      if (!entry.entry_id || !entry.names.length) throw new ListFormatError('a sanctionEntity without euReferenceNumber or nameAlias');
      if (!entry.names.some((n) => n.kind === 'primary')) entry.names[0]!.kind = 'primary';
      pending.push(entry);
      entry = null;
    }
  });
  await feedEntries(parser, chunks, pending, onEntry);
  if (!rootSeen || !generatedAt) throw new ListFormatError('not the EU FSF list (no export generationDate)');
  return { generated_at: new Date(generatedAt).toISOString() };
}
