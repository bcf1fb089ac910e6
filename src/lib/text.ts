/**
 * A text as people compare it: Unicode compatibility forms folded (NFKC: a no-break space is a
 * space), runs of spaces as one, none at the ends. Case is the caller's to fold.
 */
export const foldSpaces = (text: string) => text.normalize('NFKC').replace(/\s+/gu, ' ').trim();
