/**
 * A tool call's `digest` as the Go supervisor computes it (agent-trace's `inputDigest`): the input decoded
 * into `interface{}`, written by Go's `json.Marshal`, then hex SHA-256 of those bytes. So a hook-fed row
 * and a supervisor-fed row of the same call carry the same digest, and the loop guard and `count` over
 * digests treat them alike. `/work/shared/digest-vectors.json` holds Go's own output for the test.
 *
 * What Go's encoder does that `JSON.stringify` does not: object keys sorted bytewise (UTF-8) at every
 * depth; `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u003c`…; other control characters below U+0020
 * as `\u00XX` except `\n`, `\r`, `\t` (Go 1.19 writes `\b` and `\f` as `\u0008`, `\u000c`); DEL as is;
 * numbers as float64 in the shortest form, `-0` kept, exponent form below 1e-6 and from 1e21 (as
 * JavaScript's own thresholds are) with no leading zero in the exponent.
 */
import { createHash } from "node:crypto";
import { MAX_INPUT_DEPTH } from "./payload-bounds.js";

/** A value no JSON document decodes to (a number that overflows float64 is refused by Go's decoder). */
export class NotGoJsonError extends Error {
  constructor(what: string) {
    super(`cannot encode as Go's json.Marshal does: ${what}`);
    this.name = "NotGoJsonError";
  }
}

/**
 * What Go writes differently from `JSON.stringify`: `<`, `>`, `&`, U+2028, U+2029 escaped, `\b` and
 * `\f` as `\u0008`, `\u000c`, and surrogates (an unpaired one as U+FFFD). One character class.
 */
const NOT_AS_JSON = /[<>&\b\f\u2028\u2029\ud800-\udfff]/;

/** Characters `JSON.stringify` writes as they are and Go escapes. */
const GO_ESCAPES: readonly (readonly [string, string])[] = [
  ["<", "\\u003c"],
  [">", "\\u003e"],
  ["&", "\\u0026"],
  ["\u2028", "\\u2028"],
  ["\u2029", "\\u2029"],
];

/**
 * `JSON.stringify`'s encoding, then Go's differences, each by the engine's own split and join: a loop
 * in JavaScript costs a microsecond or more per escaped character, seconds on a large file's content.
 */
function goString(s: string): string {
  if (!NOT_AS_JSON.test(s)) return JSON.stringify(s);
  // Go decodes an unpaired surrogate escape to U+FFFD and writes that character as is.
  let out = JSON.stringify((s as string & { toWellFormed(): string }).toWellFormed()).slice(1, -1);
  for (const [c, escaped] of GO_ESCAPES) if (out.includes(c)) out = out.split(c).join(escaped);
  // Every backslash of the output opens an escape and only `\\` has a backslash second, so the pieces
  // between `\\`s hold whole escapes: in them `\b` and `\f` are backspace and form feed.
  if (out.includes("\\b") || out.includes("\\f"))
    out = out
      .split("\\\\")
      .map((piece) => piece.split("\\b").join("\\u0008").split("\\f").join("\\u000c"))
      .join("\\\\");
  return `"${out}"`;
}

function goNumber(n: number): string {
  if (!Number.isFinite(n)) throw new NotGoJsonError(`the number ${n} is not a float64 value`);
  if (Object.is(n, -0)) return "-0";
  // JavaScript's shortest round-trip form switches to exponent form at the same bounds as Go's
  // encoder (abs < 1e-6 or >= 1e21); only the exponent's spelling differs, and not for these.
  return String(n);
}

/** `keys` in the order of their UTF-8 bytes, each encoded once rather than at every comparison. */
function utf8Sorted(keys: readonly string[]): string[] {
  const encoded = keys.map((k) => ({ k, b: Buffer.from(k) }));
  encoded.sort((x, y) => Buffer.compare(x.b, y.b));
  return encoded.map((e) => e.k);
}

/**
 * The exact bytes Go's `json.Marshal` writes for a value `JSON.parse` produced. Nesting past
 * `MAX_INPUT_DEPTH` is refused (a `NotGoJsonError`) before the stack runs out.
 */
export function goJson(value: unknown, depth = 0): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return goString(value);
    case "number":
      return goNumber(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (depth >= MAX_INPUT_DEPTH) throw new NotGoJsonError(`nesting deeper than ${MAX_INPUT_DEPTH}`);
      if (Array.isArray(value)) return `[${value.map((v) => goJson(v, depth + 1)).join(",")}]`;
      const obj = value as Record<string, unknown>;
      // Go's map keys are the decoded strings, an unpaired surrogate already U+FFFD; sorting by their
      // UTF-8 bytes is not JavaScript's UTF-16 order above U+FFFF.
      const keys = utf8Sorted(Object.keys(obj));
      return `{${keys.map((k) => `${goString(k)}:${goJson(obj[k], depth + 1)}`).join(",")}}`;
    }
    default:
      throw new NotGoJsonError(`a ${typeof value} is not a JSON value`);
  }
}

/**
 * The digest of a tool call's input: a missing, null or empty input hashes as `{}`, as the Go
 * classifier's does. Undefined for an input Go could not have decoded (a number beyond float64).
 */
export function inputDigest(input: unknown): string | undefined {
  const value =
    input === undefined ||
    input === null ||
    (typeof input === "object" && !Array.isArray(input) && Object.keys(input).length === 0)
      ? {}
      : input;
  let bytes: string;
  try {
    bytes = goJson(value);
  } catch (e) {
    if (e instanceof NotGoJsonError) return undefined;
    throw e;
  }
  return createHash("sha256").update(bytes, "utf8").digest("hex");
}
