/**
 * Text as a terminal may be shown it. Admission refuses control characters, but what the CLI prints
 * also comes from rule files, older stores and imports, so every text view escapes, as defence in
 * depth, what could drive or deceive a terminal: C0 and C1 controls and DEL (escape sequences, a
 * carriage return that overwrites a line), bidi controls that reorder what is shown, zero-width and
 * other invisible format characters, line and paragraph separators, and unpaired surrogates.
 * Each is shown as `\u{…}`. JSON output needs none of this for C0 (JSON.stringify escapes it).
 */
const UNPRINTABLE =
  /[\p{Cc}\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\p{Surrogate}/gu;

export const printable = (s: string): string =>
  s.replace(UNPRINTABLE, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);

/** `out`, with every line it is given made printable: for the text views, never for JSON. */
export const printed =
  (out: (line: string) => void) =>
  (line: string): void =>
    out(printable(line));
