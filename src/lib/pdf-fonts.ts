import fontkit from '@pdf-lib/fontkit';
import type { PDFDocument, PDFFont } from 'pdf-lib';
// embedded in the single binary (bun build --compile), read from node_modules otherwise
import regularPath from 'dejavu-fonts-ttf/ttf/DejaVuSansCondensed.ttf' with { type: 'file' };
import boldPath from 'dejavu-fonts-ttf/ttf/DejaVuSansCondensed-Bold.ttf' with { type: 'file' };

/**
 * DejaVu Sans Condensed (about Helvetica's width) for PDFs that print what a client sent (names, addresses, invoice numbers): Latin
 * in full (Polish, Czech, Turkish, Vietnamese letters…), Greek and Cyrillic (not CJK), where the standard
 * Helvetica (WinAnsi) could not encode "Ł" and made the document fail. Embedded as a subset of the
 * glyphs used (a few KB a document), under the font's own name (pdf-lib's default adds a random suffix). A character the font has no glyph for (a CJK ideograph) prints as
 * U+FFFD, and invisible format characters (bidi overrides, zero-width joiners) are left out, so no
 * text can make the document fail or print differently from how it reads.
 */
export interface UnicodeFonts {
  regular: PDFFont;
  bold: PDFFont;
  /** the text as these fonts print it */
  printable(text: string): string;
}

type Fontkit = Parameters<PDFDocument['registerFontkit']>[0];
let loaded: Promise<{ regular: Uint8Array; bold: Uint8Array; glyphs: Set<number>; fontkit: Fontkit }> | undefined;

function fontFiles() {
  loaded ??= (async () => {
    const [regular, bold] = await Promise.all([Bun.file(regularPath).bytes(), Bun.file(boldPath).bytes()]);
    // each face parsed once per process: pdf-lib parses the bytes it is given on every embedding;
    // a subset is built from the parsed font without changing it
    const parsed = new Map<unknown, ReturnType<Fontkit['create']>>([
      [regular, fontkit.create(regular)],
      [bold, fontkit.create(bold)],
    ]);
    const cached: Fontkit = { create: (data, name) => parsed.get(data) ?? fontkit.create(data, name) };
    // the code points both faces draw (nearly the same set: the intersection)
    const a = new Set(parsed.get(regular)!.characterSet);
    const glyphs = new Set(parsed.get(bold)!.characterSet.filter((c: number) => a.has(c)));
    return { regular, bold, glyphs, fontkit: cached };
  })();
  return loaded;
}

const FORMAT_CHARACTER = /\p{Cf}/u;

export async function embedUnicodeFonts(doc: PDFDocument): Promise<UnicodeFonts> {
  const files = await fontFiles();
  doc.registerFontkit(files.fontkit);
  const [regular, bold] = await Promise.all([doc.embedFont(files.regular, { subset: true, customName: 'DejaVuSansCondensed' }), doc.embedFont(files.bold, { subset: true, customName: 'DejaVuSansCondensed-Bold' })]);
  const printable = (text: string) => {
    let out = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (ch === '\n') out += ch;
      else if (FORMAT_CHARACTER.test(ch)) continue;
      else out += files.glyphs.has(cp) ? ch : '\uFFFD';
    }
    return out;
  };
  return { regular, bold, printable };
}

/** Whether the embedded fonts print every character of a text (format characters are dropped anyway). */
export async function printsWhole(): Promise<(text: string) => boolean> {
  const { glyphs } = await fontFiles();
  return (text) => {
    for (const ch of text) if (ch !== '\n' && !FORMAT_CHARACTER.test(ch) && !glyphs.has(ch.codePointAt(0)!)) return false;
    return true;
  };
}
