/**
 * In-place edits of JSON text (`json-text.ts`'s nodes): append an element to an array or a member to
 * an object, written in the file's own style (its line ending, its indent unit, or all on one line), and
 * remove one. An appended entry is inserted right after the container's last child, as
 * `,<newline><indent><value>`, and removing an entry cuts from the end of the child before it to its own
 * end: so removing what was appended gives back the text as it was, byte for byte. An entry that is the
 * only child leaves an empty container written `[]` or `{}`, the way every JSON writer writes one.
 */
import type { JsonArray, JsonObject } from "./json-text.js";

export interface JsonStyle {
  readonly eol: string;
  /** One level of indentation; undefined when the file is written on one line. */
  readonly indent: string | undefined;
}

/** The style of a file: its line ending and the indentation of its first indented line. */
export function detectStyle(text: string): JsonStyle {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indented = /\n([ \t]+)\S/.exec(text);
  if (indented === null) return { eol, indent: text.includes("\n") ? "  " : undefined };
  const lead = indented[1] as string;
  return { eol, indent: lead.startsWith("\t") ? "\t" : lead };
}

/** The style of a file we create: two spaces and a newline, as `JSON.stringify(v, null, 2)`. */
export const NEW_FILE_STYLE: JsonStyle = { eol: "\n", indent: "  " };

/** The whitespace that begins the line holding `offset`, or undefined when something else precedes it there. */
function lineIndent(text: string, offset: number): string | undefined {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const lead = text.slice(lineStart, offset);
  return /^[ \t]*$/.test(lead) ? lead : undefined;
}

/** `value` as JSON in `style`, its lines after the first indented by `base`. */
function render(value: unknown, style: JsonStyle, base: string): string {
  if (style.indent === undefined) return JSON.stringify(value);
  return JSON.stringify(value, null, style.indent).replaceAll("\n", `${style.eol}${base}`);
}

type Container = JsonArray | JsonObject;

const children = (c: Container): readonly { readonly start: number; readonly end: number }[] =>
  c.kind === "array" ? c.items : c.members.map((m) => ({ start: m.start, end: m.value.end }));

/** Appends `entry` (already-rendered text producer, given the child indentation) as `c`'s last child. */
function append(text: string, c: Container, entry: (indent: string) => string, style: JsonStyle): string {
  const kids = children(c);
  const last = kids.at(-1);
  if (last !== undefined) {
    const indent = lineIndent(text, last.start);
    if (style.indent === undefined || indent === undefined) {
      // Children on one line: copy the separator the first comma has ("," or ", ").
      const first = kids[0] as { end: number };
      const gap = /^,([ \t]*)/.exec(text.slice(first.end).trimStart());
      const sep = kids.length > 1 && gap !== null ? `,${gap[1]}` : style.indent === undefined ? "," : ", ";
      return `${text.slice(0, last.end)}${sep}${entry("")}${text.slice(last.end)}`;
    }
    return `${text.slice(0, last.end)},${style.eol}${indent}${entry(indent)}${text.slice(last.end)}`;
  }
  const open = c.start + 1;
  const close = c.end - 1;
  if (style.indent === undefined) return `${text.slice(0, open)}${entry("")}${text.slice(close)}`;
  const outer = lineIndent(text, c.start) ?? leadingWhitespace(text, c.start);
  const inner = outer + style.indent;
  return `${text.slice(0, open)}${style.eol}${inner}${entry(inner)}${style.eol}${outer}${text.slice(close)}`;
}

/** The indentation of the line holding `offset`, whatever follows it. */
function leadingWhitespace(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? "";
}

export function appendItem(text: string, array: JsonArray, value: unknown, style: JsonStyle): string {
  return append(text, array, (indent) => render(value, style, indent), style);
}

export function appendMember(
  text: string,
  object: JsonObject,
  key: string,
  value: unknown,
  style: JsonStyle,
): string {
  return append(
    text,
    object,
    (indent) =>
      `${JSON.stringify(key)}:${style.indent === undefined ? "" : " "}${render(value, style, indent)}`,
    style,
  );
}

/** Removes child `index` of `c`, with the separator before it (after it, for the first of several). */
export function removeChild(text: string, c: Container, index: number): string {
  const kids = children(c);
  const kid = kids[index];
  if (kid === undefined) throw new RangeError(`no child ${index}`);
  if (kids.length === 1) return `${text.slice(0, c.start + 1)}${text.slice(c.end - 1)}`;
  if (index > 0) return `${text.slice(0, (kids[index - 1] as { end: number }).end)}${text.slice(kid.end)}`;
  return `${text.slice(0, kid.start)}${text.slice((kids[1] as { start: number }).start)}`;
}
