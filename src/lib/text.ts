/**
 * A text as people compare it: Unicode compatibility forms folded (NFKC: a no-break space is a
 * space), invisible format characters dropped (a zero-width space or word joiner made "FT 2026/7"
 * a second invoice), runs of spaces as one, none at the ends. Case is the caller's to fold.
 */
export const foldSpaces = (text: string) => text.normalize('NFKC').replace(/\p{Cf}+/gu, '').replace(/\s+/gu, ' ').trim();

/**
 * A text in the characters an OAuth error_description may hold (RFC 6749 §5.2, RFC 6750 §3:
 * printable ASCII but " and \), anything else shown as "?" (a typographic apostrophe as ').
 */
export const oauthDescription = (text: string) => text.replace(/[\u2019"]/g, "'").replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');

/** An API route's RFC 6750 §3 challenge for a refused Bearer credential: its error code and the message as error_description (and the scope it lacks). */
export const bearerChallenge = (error: 'invalid_token' | 'insufficient_scope', message: string, scope?: string) =>
  `Bearer realm="api", error="${error}", error_description="${oauthDescription(message)}"${scope ? `, scope="${scope}"` : ''}`;

/** Whether an Authorization header holds several (two headers arrive joined by a comma, which no key, token or base64 holds) */
export const severalAuthorizations = (authorization: string | null | undefined) => !!authorization?.includes(',');
