/**
 * `digest` agrees with the Go supervisor's: every vector of `/work/shared/digest-vectors.json` (Go's own
 * encoder's bytes and digests), and, as a property, key order and whitespace never change a digest.
 */
import * as fs from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { goJson, inputDigest } from "../../../../src/shell/agents/ingest/go-json-digest.js";
import { runs } from "../../../property-runs.js";

interface Vector {
  readonly input: unknown;
  readonly canonical: string;
  readonly digest: string;
}

const VECTORS_FILE = "/work/shared/digest-vectors.json";
// The vectors as committed beside the tests, so the suite does not depend on the shared folder.
const LOCAL_VECTORS = new URL("../../../fixtures/agents/digest-vectors.json", import.meta.url);

const vectors = (): Vector[] => {
  const file = fs.existsSync(LOCAL_VECTORS) ? LOCAL_VECTORS : VECTORS_FILE;
  return (JSON.parse(fs.readFileSync(file, "utf8")) as { vectors: Vector[] }).vectors;
};

describe("Digests equal the Go supervisor's", () => {
  it.each(vectors().map((v) => [v.canonical, v] as const))("%s", (_, v) => {
    expect(goJson(v.input)).toBe(v.canonical);
    expect(inputDigest(v.input)).toBe(v.digest);
  });

  it("a missing or null input hashes as {}, as agent-trace's inputDigest does", () => {
    const empty = inputDigest({});
    expect(inputDigest(undefined)).toBe(empty);
    expect(inputDigest(null)).toBe(empty);
  });

  it("a number beyond float64 has no digest (Go's decoder refuses it)", () => {
    expect(inputDigest(JSON.parse('{"n": 1e400}'))).toBeUndefined();
  });

  it("an unpaired surrogate is written as U+FFFD, as Go decodes it", () => {
    expect(goJson(JSON.parse('"a\\ud800b"'))).toBe('"a\ufffdb"');
    expect(goJson("😀")).toBe('"😀"');
  });

  it("keys sort by their UTF-8 bytes, not by UTF-16 code units", () => {
    // In UTF-8 U+FF61 (EF BD A1) comes before U+1F600 (F0 9F 98 80); in UTF-16, 0xFF61 > 0xD83D.
    expect(goJson({ "😀": 1, "｡": 2 })).toBe('{"｡":2,"😀":1}');
  });
});

/** Any JSON value JSON.parse can produce (finite numbers, any strings and keys). */
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ unit: "binary" }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: "binary" }), tie("value"), { maxKeys: 5 }),
  ),
})).value;

/** `value` written with its keys in a random order and random whitespace between tokens. */
function scrambled(value: unknown, rand: () => number): string {
  const ws = () => [" ", "\n", "\t", "\r", ""][Math.floor(rand() * 5)] as string;
  // JSON.stringify writes -0 as 0; the text of -0 is "-0", which JSON.parse reads back as -0.
  if (Object.is(value, -0)) return `${ws()}-0${ws()}`;
  if (value === null || typeof value !== "object") return `${ws()}${JSON.stringify(value)}${ws()}`;
  if (Array.isArray(value)) return `${ws()}[${value.map((v) => scrambled(v, rand)).join(",")}]${ws()}`;
  const keys = Object.keys(value).sort(() => rand() - 0.5);
  const obj = value as Record<string, unknown>;
  return `${ws()}{${keys.map((k) => `${ws()}${JSON.stringify(k)}${ws()}:${scrambled(obj[k], rand)}`).join(",")}}${ws()}`;
}

describe("A digest is a function of the value", () => {
  it("key order and whitespace never change a digest", () => {
    fc.assert(
      fc.property(jsonValue, fc.integer(), (value, seed) => {
        let s = seed;
        const rand = () => {
          s = (s * 1103515245 + 12345) & 0x7fffffff;
          return s / 0x80000000;
        };
        const a = scrambled(value, rand);
        const b = scrambled(value, rand);
        expect(inputDigest(JSON.parse(a))).toBe(inputDigest(JSON.parse(b)));
        expect(inputDigest(JSON.parse(a))).toBe(inputDigest(value));
      }),
      { numRuns: runs(300) },
    );
  });
});

/** e4eabc5's string encoder, a character at a time: the reference for the split-and-join one. */
function goStringBefore(s: string): string {
  const HEX = "0123456789abcdef";
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let escaped: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
      const short: Record<number, string> = { 34: '\\"', 92: "\\\\", 10: "\\n", 13: "\\r", 9: "\\t" };
      escaped = short[c] ?? `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
    } else if (c === 0x2028 || c === 0x2029) escaped = `\\u${c.toString(16)}`;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const pair = c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
      if (pair) {
        i++;
        continue;
      }
      escaped = "\ufffd";
    }
    if (escaped !== undefined) {
      out += s.slice(start, i) + escaped;
      start = i + 1;
    }
  }
  return `${out + s.slice(start)}"`;
}

describe("Strings are encoded as the character-at-a-time encoder did (issue 26: its cost per escape)", () => {
  it("for any string, backslashes, control characters and lone surrogates included", () => {
    const tricky = fc.constantFrom(
      "\\",
      "b",
      "f",
      "u",
      "d800",
      "\b",
      "\f",
      "<",
      ">",
      "&",
      "\u2028",
      "\u2029",
      "\ud800",
      "\udc00",
      "\ud83d\ude00",
      '"',
      "\n",
      "\u0001",
      "\u007f",
      "x",
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.array(tricky).map((a) => a.join("")),
        ),
        (s) => {
          expect(goJson(s)).toBe(goStringBefore(s));
        },
      ),
      { numRuns: runs(500) },
    );
  });
});

describe("Bounded work (issue 26)", () => {
  it("a tool_input nested 100,000 deep has no digest, and overflows no stack; 1,000 deep has one", () => {
    const nest = (depth: number, wrap: (v: unknown) => unknown) => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = wrap(v);
      return v;
    };
    expect(inputDigest(nest(100_000, (v) => [v]))).toBeUndefined();
    expect(inputDigest(nest(100_000, (v) => ({ a: v })))).toBeUndefined();
    expect(inputDigest(nest(999, (v) => [v]))).toMatch(/^[0-9a-f]{64}$/);
  });
});
