/**
 * Where each character of a top-level TOML string value stands in its file. A CEL error has an offset
 * into the decoded `when`; the rule's author needs the line and column in the file, which differ once
 * the value is a basic string with escapes (`\"` is two characters in the file and one in `when`) or a
 * multi-line string. smol-toml keeps no positions, so this scans the source for the key's value and
 * walks its raw text, decoding as TOML does. Columns are in code points, as CEL counts them.
 */

export type TomlQuote = '"' | "'" | '"""' | "'''";

/** A string value as written: where its raw text (inside the quotes) starts, and that text. */
export interface StringValueSource {
  /** 1-based line and column (code points) of the raw text's first character. */
  readonly line: number;
  readonly column: number;
  readonly quote: TomlQuote;
  readonly raw: string;
}

export interface FilePosition {
  readonly line: number;
  readonly column: number;
}

const ESCAPE_WIDTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };
/** TOML's one-character escapes in basic strings, and what each stands for. */
export const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  b: "\b",
  t: "\t",
  n: "\n",
  f: "\f",
  r: "\r",
  e: "\u001b",
  '"': '"',
  "\\": "\\",
};

/** The first top-level `key = <string>` in `text` (bare or quoted key), or undefined. */
export function findStringValue(text: string, key: string): StringValueSource | undefined {
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(`^[ \\t]*(?:${escaped}|"${escaped}"|'${escaped}')[ \\t]*=[ \\t]*('''|"""|'|")`);
  const lines = text.split(/\r\n|\r|\n/);
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const m = re.exec(line);
    if (m !== null) {
      const quote = m[1] as TomlQuote;
      let start = offset + m[0].length;
      let lineNo = i + 1;
      let column = codePoints(line.slice(0, m[0].length)) + 1;
      // TOML drops a newline right after a multi-line string's opening quotes.
      if (quote.length === 3) {
        const nl = /^\r?\n/.exec(text.slice(start, start + 2));
        if (nl !== null) {
          start += nl[0].length;
          lineNo++;
          column = 1;
        }
      }
      const end = closingQuote(text, start, quote);
      return end === undefined ? undefined : { line: lineNo, column, quote, raw: text.slice(start, end) };
    }
    offset += line.length + (text.startsWith("\r\n", offset + line.length) ? 2 : 1);
  }
  return undefined;
}

/** The value the raw text denotes, as TOML decodes it. */
export function decodeStringValue(source: StringValueSource): string {
  let out = "";
  walk(source, (_pos, decoded) => {
    out += decoded;
    return false;
  });
  return out;
}

/**
 * The file position of the character at UTF-16 `offset` of the decoded value; an offset at the end
 * points at the closing quote. An escape's characters all point at its backslash.
 */
export function locateInStringValue(source: StringValueSource, offset: number): FilePosition {
  let seen = 0;
  let found: FilePosition | undefined;
  const end = walk(source, (pos, decoded) => {
    if (decoded.length > 0 && offset < seen + decoded.length) {
      found = pos;
      return true;
    }
    seen += decoded.length;
    return false;
  });
  return found ?? end;
}

/**
 * Visits each raw element (a character, an escape, a line-ending backslash and the blank it trims) with
 * its file position and what it decodes to; stops when `visit` returns true. Returns the position just
 * past the raw text.
 */
function walk(
  source: StringValueSource,
  visit: (pos: FilePosition, decoded: string) => boolean,
): FilePosition {
  const { raw, quote } = source;
  const escapes = quote.startsWith('"');
  const multiline = quote.length === 3;
  let line = source.line;
  let column = source.column;
  let i = 0;
  while (i < raw.length) {
    const pos = { line, column };
    const c = raw[i] as string;
    if (escapes && c === "\\") {
      const next = raw[i + 1] ?? "";
      const trimmed = multiline ? /^\\[ \t]*\r?\n[ \t\r\n]*/.exec(raw.slice(i)) : null;
      if (trimmed !== null) {
        const consumed = trimmed[0];
        const lastNl = consumed.lastIndexOf("\n");
        line += (consumed.match(/\n/g) ?? []).length;
        column = codePoints(consumed.slice(lastNl + 1)) + 1;
        i += consumed.length;
        if (visit(pos, "")) return pos;
        continue;
      }
      const width = ESCAPE_WIDTH[next];
      let decoded: string;
      let length: number;
      if (width !== undefined) {
        const code = Number.parseInt(raw.slice(i + 2, i + 2 + width), 16);
        decoded = Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : "";
        length = 2 + width;
      } else {
        decoded = SIMPLE_ESCAPES[next] ?? next;
        length = 2;
      }
      i += length;
      column += length;
      if (visit(pos, decoded)) return pos;
      continue;
    }
    if (c === "\r" && raw[i + 1] === "\n") {
      i += 2;
      line++;
      column = 1;
      if (visit(pos, "\r\n")) return pos;
      continue;
    }
    const cp = raw.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if (c === "\n") {
      line++;
      column = 1;
    } else column++;
    if (visit(pos, ch)) return pos;
  }
  return { line, column };
}

/** Where the string opened at `start` closes (the index of its closing quotes), or undefined. */
function closingQuote(text: string, start: number, quote: TomlQuote): number | undefined {
  const escapes = quote.startsWith('"');
  let i = start;
  while (i < text.length) {
    if (escapes && text[i] === "\\") {
      i += 2;
      continue;
    }
    if (quote.length === 1 && (text[i] === "\n" || text[i] === "\r")) return undefined;
    if (text.startsWith(quote, i)) {
      // A multi-line string may end with up to two quotes of its own before the closing three.
      let end = i;
      if (quote.length === 3) while (end < i + 2 && text.startsWith(quote, end + 1)) end++;
      return end;
    }
    i++;
  }
  return undefined;
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
