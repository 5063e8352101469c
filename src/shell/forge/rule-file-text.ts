/**
 * The rule file a pull request commits, made easier to review: a stored proposal's `when` is a TOML basic
 * string (`"…"`, every `"` escaped); written as a literal string (`'…'`, or `'''…'''` across lines) it
 * reads as the CEL it is. Only where a literal string can hold it (no `'`, or no `'''` across lines,
 * no control characters), and only when the rewritten file parses to exactly the same values.
 */
import { parse } from "smol-toml";

const WHEN_LINE = /^when = ("(?:[^"\\]|\\.)*")$/m;

export function reviewableRuleFile(text: string): string {
  const m = WHEN_LINE.exec(text);
  if (m === null) return text;
  let when: unknown;
  try {
    when = parse(`v = ${m[1]}`).v;
  } catch {
    return text;
  }
  if (typeof when !== "string") return text;
  const literal = literalOf(when);
  if (literal === undefined) return text;
  const out = text.replace(WHEN_LINE, () => `when = ${literal}`);
  return sameValues(text, out) ? out : text;
}

function literalOf(s: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: controls are what a literal string cannot hold
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(s)) return undefined;
  if (!s.includes("\n") && !s.includes("'") && !s.includes("\t")) return `'${s}'`;
  // A multi-line literal drops a newline right after its opening delimiter, so one is added.
  if (!s.includes("'''") && !s.endsWith("'")) return `'''\n${s}'''`;
  return undefined;
}

function sameValues(a: string, b: string): boolean {
  try {
    return JSON.stringify(parse(a)) === JSON.stringify(parse(b));
  } catch {
    return false;
  }
}
