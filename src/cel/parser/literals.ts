/**
 * Decoding of literal tokens into values, with CEL's range rules and escape rules.
 *
 * Each decoder returns the value or a `LiteralError` whose `at` is an offset within the token text, so
 * the caller can point at the exact escape that is wrong.
 */
import type { Literal } from "../ast.js";

export interface LiteralError {
  readonly error: string;
  /** Offset within the token image. */
  readonly at: number;
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** An int literal; `negated` admits -2^63, which only exists as a negative literal. */
export function decodeInt(image: string, negated: boolean): Literal | LiteralError {
  const magnitude = BigInt(image);
  const limit = negated ? INT64_MAX + 1n : INT64_MAX;
  if (magnitude > limit) return { error: "invalid int literal", at: 0 };
  return { type: "int", value: negated ? -magnitude : magnitude };
}

export function decodeUint(image: string): Literal | LiteralError {
  const value = BigInt(image.slice(0, -1));
  if (value > UINT64_MAX) return { error: "invalid uint literal", at: 0 };
  return { type: "uint", value };
}

export function decodeDouble(image: string, negated: boolean): Literal | LiteralError {
  const value = Number(image);
  if (!Number.isFinite(value)) return { error: "invalid double literal", at: 0 };
  return { type: "double", value: negated ? -value : value };
}

interface Quoted {
  readonly raw: boolean;
  readonly body: string;
  /** Offset of `body` within the image. */
  readonly bodyStart: number;
}

function unquote(image: string, prefixLength: number): Quoted {
  let i = prefixLength;
  let raw = false;
  if (image[i] === "r" || image[i] === "R") {
    raw = true;
    i++;
  }
  const triple = image.startsWith('"""', i) || image.startsWith("'''", i);
  const q = triple ? 3 : 1;
  return { raw, body: image.slice(i + q, image.length - q), bodyStart: i + q };
}

export function decodeString(image: string): Literal | LiteralError {
  const { raw, body, bodyStart } = unquote(image, 0);
  if (raw) return { type: "string", value: body };
  let out = "";
  let i = 0;
  while (i < body.length) {
    const slash = body.indexOf("\\", i);
    if (slash < 0) {
      out += body.slice(i);
      break;
    }
    out += body.slice(i, slash);
    const esc = readEscape(body, slash, "string");
    if ("error" in esc) return { error: esc.error, at: bodyStart + esc.at };
    out += String.fromCodePoint(esc.value);
    i = esc.next;
  }
  return { type: "string", value: out };
}

export function decodeBytes(image: string): Literal | LiteralError {
  const { raw, body, bodyStart } = unquote(image, 1);
  const encoder = new TextEncoder();
  if (raw) return { type: "bytes", value: encoder.encode(body) };
  const out: number[] = [];
  let i = 0;
  while (i < body.length) {
    const slash = body.indexOf("\\", i);
    const plain = body.slice(i, slash < 0 ? body.length : slash);
    for (const b of encoder.encode(plain)) out.push(b);
    if (slash < 0) break;
    const esc = readEscape(body, slash, "bytes");
    if ("error" in esc) return { error: esc.error, at: bodyStart + esc.at };
    if (esc.octet) out.push(esc.value);
    else for (const b of encoder.encode(String.fromCodePoint(esc.value))) out.push(b);
    i = esc.next;
  }
  return { type: "bytes", value: Uint8Array.from(out) };
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  "\\": 0x5c,
  "'": 0x27,
  '"': 0x22,
  "`": 0x60,
  "?": 0x3f,
};

interface Escape {
  readonly value: number;
  /** For bytes: the value is one octet (`\xFF`, `\377`), not a code point to encode as UTF-8. */
  readonly octet: boolean;
  readonly next: number;
}

function readEscape(body: string, slash: number, kind: "string" | "bytes"): Escape | LiteralError {
  const c = body[slash + 1] ?? "";
  const simple = SIMPLE_ESCAPES[c];
  if (simple !== undefined) return { value: simple, octet: false, next: slash + 2 };
  if (c === "x" || c === "X") return hexEscape(body, slash, 2, kind === "bytes");
  if (c === "u" || c === "U") {
    if (kind === "bytes") return { error: `\\${c} escapes are not allowed in bytes literals`, at: slash };
    return hexEscape(body, slash, c === "u" ? 4 : 8, false);
  }
  if (c >= "0" && c <= "3") {
    const digits = body.slice(slash + 1, slash + 4);
    if (!/^[0-3][0-7][0-7]$/.test(digits)) return { error: "invalid octal escape sequence", at: slash };
    return { value: Number.parseInt(digits, 8), octet: kind === "bytes", next: slash + 4 };
  }
  return { error: `invalid escape sequence '\\${c}'`, at: slash };
}

function hexEscape(body: string, slash: number, digits: number, octet: boolean): Escape | LiteralError {
  const hex = body.slice(slash + 2, slash + 2 + digits);
  if (hex.length !== digits || !/^[0-9a-fA-F]+$/.test(hex)) {
    return {
      error: `invalid escape sequence '\\${body[slash + 1]}': expected ${digits} hex digits`,
      at: slash,
    };
  }
  const value = Number.parseInt(hex, 16);
  if (!octet && (value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff))) {
    return { error: "invalid unicode code point", at: slash };
  }
  return { value, octet, next: slash + 2 + digits };
}
