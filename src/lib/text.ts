/**
 * A text as people compare it: Unicode compatibility forms folded (NFKC: a no-break space is a
 * space), invisible format characters dropped (a zero-width space or word joiner made "FT 2026/7"
 * a second invoice), runs of spaces as one, none at the ends. Case is the caller's to fold.
 */
export const foldSpaces = (text: string) => text.normalize('NFKC').replace(/\p{Cf}+/gu, '').replace(/\s+/gu, ' ').trim();
