/**
 * JSON Lines input, one value a line with its 1-based number. A line that is not UTF-8 text, not JSON,
 * or holds a string that is not well-formed Unicode is reported, not thrown, and never rewritten:
 * decoding with replacement, or encoding a lone surrogate for the wire, would store U+FFFD in place of
 * what the producer sent. A UTF-8 byte order mark is accepted at the start of the first line only,
 * where some editors write one; anywhere else it is refused, saying so. A line longer than
 * MAX_LINE_BYTES is refused without being held whole: the reader skips to its end.
 */
import { isUnicodeText, NOT_UNICODE } from "../../core/admission.js";

export type Line =
  | { readonly n: number; readonly value: unknown }
  | { readonly n: number; readonly error: string };

/** The longest line read: a longer one could not be sent in one request (4 MiB) anyway. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
const TOO_LONG = `the line is longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB`;

const BOM = "\ufeff";
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export async function* jsonLines(input: NodeJS.ReadableStream): AsyncGenerator<Line> {
  let n = 0;
  for await (const bytes of byteLines(input)) {
    n++;
    const line = bytes === undefined ? { n, error: TOO_LONG } : parseLine(n, bytes);
    if (line !== undefined) yield line;
  }
}

/**
 * The input's lines as bytes, split on LF, so each is decoded on its own and reported by number;
 * undefined for a line longer than MAX_LINE_BYTES, of which no more than that is ever held.
 */
async function* byteLines(input: NodeJS.ReadableStream): AsyncGenerator<Buffer | undefined> {
  let partial: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  const keep = (piece: Buffer) => {
    if (tooLong) return;
    held += piece.length;
    if (held > MAX_LINE_BYTES) {
      tooLong = true;
      partial = [];
    } else partial.push(piece);
  };
  const end = (): Buffer | undefined => {
    const line = tooLong ? undefined : Buffer.concat(partial);
    partial = [];
    held = 0;
    tooLong = false;
    return line;
  };
  for await (const chunk of input) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    let start = 0;
    for (let lf = buf.indexOf(0x0a); lf !== -1; lf = buf.indexOf(0x0a, start)) {
      keep(buf.subarray(start, lf));
      yield end();
      start = lf + 1;
    }
    if (start < buf.length) keep(buf.subarray(start));
  }
  if (held > 0) yield end();
}

/** Line `n`'s value or why it is refused; undefined for a blank line. */
function parseLine(n: number, bytes: Buffer): Line | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { n, error: "not UTF-8 text" };
  }
  if (text.endsWith("\r")) text = text.slice(0, -1);
  if (text.startsWith(BOM)) {
    if (n !== 1) return { n, error: "a byte order mark (U+FEFF) may only begin the first line" };
    text = text.slice(BOM.length);
  }
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { n, error: `not JSON: ${(e as Error).message}` };
  }
  const field = notUnicodeField(value);
  return field === undefined ? { n, value } : { n, error: `${field} ${NOT_UNICODE}` };
}

/**
 * The top-level field whose value (or name) holds a string with an escaped lone surrogate, or undefined.
 * The wire's encoding would replace it with U+FFFD before admission could see it, so it is caught here.
 */
function notUnicodeField(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  for (const [key, v] of Object.entries(value)) {
    if (!isUnicodeText(key)) return "a field name";
    if (!unicodeThroughout(v)) return key;
  }
  return undefined;
}

const unicodeThroughout = (v: unknown): boolean =>
  typeof v === "string"
    ? isUnicodeText(v)
    : typeof v === "object" && v !== null
      ? Object.entries(v).every(([k, x]) => isUnicodeText(k) && unicodeThroughout(x))
      : true;
