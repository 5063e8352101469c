/**
 * Where each key and table of a TOML document stands. smol-toml reports positions only for its own
 * syntax errors, so a config problem found after parsing (an unknown key, a bad value) is located by
 * this scan of the source. It runs only on text smol-toml has accepted, and it is best-effort: a path it
 * cannot find is reported without a position rather than failing the load.
 */

import { SIMPLE_ESCAPES } from "../../core/toml-string-map.js";

export interface Position {
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units. */
  readonly column: number;
}

export interface TomlPositions {
  /** The first place the key or table at `path` is written (a header, a dotted key, an inline key). */
  of(path: readonly string[]): Position | undefined;
}

// Longest first, so a multi-line string is not taken for an empty one.
const QUOTES = ['"""', "'''", '"', "'"] as const;
const BARE_KEY = /[A-Za-z0-9_-]/;

export function scanPositions(text: string): TomlPositions {
  const found = new Map<string, Position>();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  const positionAt = (offset: number): Position => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (lineStarts[lo] as number) + 1 };
  };
  // Every prefix is recorded too, so a table defined only through dotted keys still has a position.
  const record = (path: readonly string[], offset: number): void => {
    for (let n = 1; n <= path.length; n++) {
      const id = JSON.stringify(path.slice(0, n));
      if (!found.has(id)) found.set(id, positionAt(offset));
    }
  };

  let i = 0;
  const peek = (s: string): boolean => text.startsWith(s, i);
  const skipBlank = (newlines: boolean): void => {
    while (i < text.length) {
      const c = text[i] as string;
      if (c === " " || c === "\t" || (newlines && (c === "\n" || c === "\r"))) i++;
      else if (c === "#") while (i < text.length && text[i] !== "\n") i++;
      else return;
    }
  };
  const skipString = (quote: string, escapes: boolean): void => {
    i += quote.length;
    while (i < text.length && !peek(quote)) i += escapes && text[i] === "\\" ? 2 : 1;
    i += quote.length;
    // A multi-line string may end with up to two quotes of its own before the closing three.
    if (quote.length === 3) for (let n = 0; n < 2 && text[i] === quote[0]; n++) i++;
  };
  const simpleKey = (): string => {
    const c = text[i];
    if (c === '"' || c === "'") {
      const start = ++i;
      let out = "";
      while (i < text.length && text[i] !== c) {
        if (c === '"' && text[i] === "\\") {
          out += decodeEscape();
        } else out += text[i++];
      }
      i++;
      return c === "'" ? text.slice(start, i - 1) : out;
    }
    const start = i;
    while (i < text.length && BARE_KEY.test(text[i] as string)) i++;
    return text.slice(start, i);
  };
  const decodeEscape = (): string => {
    const e = text[i + 1] ?? "";
    const width = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (width > 0) {
      const code = Number.parseInt(text.slice(i + 2, i + 2 + width), 16);
      i += 2 + width;
      return String.fromCodePoint(code);
    }
    i += 2;
    return SIMPLE_ESCAPES[e] ?? e;
  };
  const dottedKey = (): string[] => {
    const parts = [simpleKey()];
    skipBlank(false);
    while (text[i] === ".") {
      i++;
      skipBlank(false);
      parts.push(simpleKey());
      skipBlank(false);
    }
    return parts;
  };
  const skipValue = (path: readonly string[]): void => {
    const quote = QUOTES.find(peek);
    if (quote !== undefined) {
      skipString(quote, quote.startsWith('"'));
      return;
    }
    if (peek("[")) {
      i++;
      for (skipBlank(true); i < text.length && text[i] !== "]"; skipBlank(true)) {
        const before = i;
        skipValue(path);
        skipBlank(true);
        if (text[i] === ",") i++;
        if (i === before) return;
      }
      i++;
      return;
    }
    if (peek("{")) {
      i++;
      for (skipBlank(false); i < text.length && text[i] !== "}"; skipBlank(false)) {
        const before = i;
        keyValue(path);
        skipBlank(false);
        if (text[i] === ",") i++;
        if (i === before) return;
      }
      i++;
      return;
    }
    while (i < text.length && !",]}#\r\n".includes(text[i] as string)) i++;
  };
  const keyValue = (table: readonly string[]): void => {
    const start = i;
    const path = [...table, ...dottedKey()];
    record(path, start);
    skipBlank(false);
    if (text[i] === "=") i++;
    skipBlank(false);
    skipValue(path);
  };

  let table: readonly string[] = [];
  for (skipBlank(true); i < text.length; skipBlank(true)) {
    const before = i;
    if (text[i] === "[") {
      const start = i;
      i += peek("[[") ? 2 : 1;
      skipBlank(false);
      table = dottedKey();
      record(table, start);
      while (i < text.length && text[i] !== "\n") i++;
    } else {
      keyValue(table);
    }
    if (i === before) break;
  }
  return { of: (path) => found.get(JSON.stringify(path)) };
}
