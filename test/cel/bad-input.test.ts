import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type DiagnosticCode, parse } from "../../src/cel/index.js";
import { runs } from "../property-runs.js";

function codes(text: string): DiagnosticCode[] {
  const r = parse(text);
  return r.ok ? [] : r.errors.map((e) => e.code);
}

function firstError(text: string) {
  const r = parse(text);
  if (r.ok) throw new Error("parsed");
  const d = r.errors[0];
  if (d === undefined) throw new Error("no diagnostic");
  return { ...d, ...r.source.location(d.offset) };
}

describe("bad input gets a named error with a position", () => {
  it("unterminated strings, single- and triple-quoted, point at the opening quote", () => {
    expect(firstError('a == "abc')).toMatchObject({ code: "unterminated_string", line: 1, column: 6 });
    expect(firstError("x + '''abc\n\ndef")).toMatchObject({
      code: "unterminated_string",
      line: 1,
      column: 5,
    });
    expect(firstError("b'abc")).toMatchObject({ code: "unterminated_string", column: 1 });
    expect(firstError("'a\nb'")).toMatchObject({ code: "unterminated_string", line: 1, column: 1 });
  });

  it("bad escapes point at the backslash", () => {
    expect(firstError(String.raw`"ab\zc"`)).toMatchObject({ code: "invalid_escape", column: 4 });
    expect(firstError(String.raw`"\u12"`)).toMatchObject({ code: "invalid_escape", column: 2 });
    expect(firstError(String.raw`'ok' + '\U00110000'`)).toMatchObject({ code: "invalid_escape", column: 9 });
  });

  it("nesting deeper than the limit is a depth error, never a stack overflow", () => {
    const nested = (n: number, open: string, close: string) => `${open.repeat(n)}1${close.repeat(n)}`;
    expect(parse(nested(99, "[", "]")).ok).toBe(true);
    for (const [open, close] of [
      ["(", ")"],
      ["[", "]"],
      ["f(", ")"],
      ["-(", ")"],
      ["{1: ", "}"],
      ["a[", "]"],
    ] as const) {
      expect(codes(nested(101, open, close))).toEqual(["depth_limit"]);
      expect(codes(nested(100_000 / (open.length + close.length) - 1, open, close))).toEqual(["depth_limit"]);
    }
    expect(parse(`${"a.".repeat(98)}b`).ok).toBe(true);
    expect(codes(`${"a.".repeat(100)}b`)).toEqual(["depth_limit"]);
    expect(codes(`1${" + 1".repeat(300)}`)).toEqual(["depth_limit"]);
    expect(codes(`${"x.map(y, ".repeat(40)}1${")".repeat(40)}`)).toEqual(["depth_limit"]);
    expect(parse(nested(20, "(", ")"), { maxDepth: 12 }).ok).toBe(false);
  });

  it("an expression over the size limit is refused before it is read", () => {
    const megabyte = `x == "${"a".repeat(1024 * 1024)}"`;
    const started = performance.now();
    expect(firstError(megabyte)).toMatchObject({ code: "size_limit", line: 1, column: 1 });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(parse(`"${"é".repeat(99_990)}"`).ok).toBe(true);
  });

  it("a lone surrogate in the text is refused", () => {
    expect(firstError("'a' + '\ud800'")).toMatchObject({ code: "syntax", column: 8 });
  });

  it("random text never throws: every result is a tree or diagnostics with in-range positions", () => {
    const alphabet = fc.constantFrom(..."ab01.()[]{}\"'`\\?:!-+*/%<>=&|,u rxbR\n\t$😀é".split(""));
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 60 }),
      fc.string({ unit: alphabet, maxLength: 60 }),
      fc.uint8Array({ maxLength: 80 }).map((bytes) => new TextDecoder().decode(bytes)),
    );
    fc.assert(
      fc.property(text, (t) => {
        const r = parse(t);
        if (!r.ok) {
          expect(r.errors.length).toBeGreaterThan(0);
          for (const e of r.errors) {
            expect(e.offset).toBeGreaterThanOrEqual(0);
            expect(e.offset).toBeLessThanOrEqual(t.length);
            expect(e.message.length).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: runs(3000) },
    );
  });

  it("a long run of operators stays fast", () => {
    const started = performance.now();
    const r = parse(`${"a && ".repeat(15_000)}a`);
    expect(r.ok).toBe(true);
    parse(`${"(".repeat(30_000)}`);
    parse(`${"'".repeat(90_000)}`);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
