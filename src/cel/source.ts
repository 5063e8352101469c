/**
 * The text of one expression and the mapping from offsets to lines and columns.
 *
 * Offsets are UTF-16 code-unit offsets into `text` (what the lexer reports); columns are counted in code
 * points, as the CEL reference implementation counts them, so a caret lands under the right character
 * even after an emoji.
 */
export interface Location {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, in code points. */
  readonly column: number;
}

export class Source {
  readonly text: string;
  /** A name for the text in rendered errors: a file, a rule key, or `<input>`. */
  readonly description: string;
  private lineStarts: number[] | undefined;

  constructor(text: string, description = "<input>") {
    this.text = text;
    this.description = description;
  }

  location(offset: number): Location {
    const starts = this.starts();
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= clamped) lo = mid;
      else hi = mid - 1;
    }
    const lineStart = starts[lo] as number;
    return { line: lo + 1, column: codePointLength(this.text, lineStart, clamped) + 1 };
  }

  /** The text of a 1-based line, without its line terminator. */
  line(line: number): string | undefined {
    const starts = this.starts();
    const start = starts[line - 1];
    if (start === undefined) return undefined;
    const next = starts[line];
    let end = next === undefined ? this.text.length : next;
    while (end > start && (this.text[end - 1] === "\n" || this.text[end - 1] === "\r")) end--;
    return this.text.slice(start, end);
  }

  private starts(): number[] {
    if (this.lineStarts === undefined) {
      const starts = [0];
      const text = this.text;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 10) starts.push(i + 1);
        else if (c === 13) {
          if (text.charCodeAt(i + 1) === 10) i++;
          starts.push(i + 1);
        }
      }
      this.lineStarts = starts;
    }
    return this.lineStarts;
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Whether `text` has any surrogate code unit. Most text has none, and V8's regex scan is several times
 * faster than a charCodeAt loop, so callers test this before walking the text.
 */
export function hasSurrogate(text: string): boolean {
  return SURROGATE.test(text);
}

/** Number of code points in text[from, to). */
export function codePointLength(text: string, from = 0, to = text.length): number {
  if (from === 0 && to === text.length && !hasSurrogate(text)) return text.length;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
