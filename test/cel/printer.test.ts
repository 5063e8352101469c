import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse, parseOrThrow, print } from "../../src/cel/index.js";
import { celLexer } from "../../src/cel/parser/tokens.js";
import { runs } from "../property-runs.js";
import { build, recipe } from "./arbitrary.js";
import { shape } from "./shape.js";

const canonical = (text: string): string => print(parseOrThrow(text));

describe("the canonical printer", () => {
  it("prints one spacing and quoting style", () => {
    expect(canonical("  a+b*c  ")).toBe("a + b * c");
    expect(canonical("f( a ,b )")).toBe("f(a, b)");
    expect(canonical("{'k':[1,2u,3.0,-0.0]}")).toBe('{"k": [1, 2u, 3.0, -0.0]}');
    expect(canonical("'it\\'s'")).toBe(`"it's"`);
    expect(canonical("r'\\d'")).toBe('"\\\\d"');
    expect(canonical("'''a\nb'''")).toBe('"a\\nb"');
    expect(canonical("b'\\x00\\xff'")).toBe('b"\\x00\\xFF"');
    expect(canonical("'\\u200b'")).toBe('"\\u200B"');
    expect(canonical("1e21")).toBe("1e+21");
  });

  it("escapes each character alike inside plain ASCII text and beside other characters", () => {
    const printed = (value: string) =>
      print({ expr: { kind: "literal", id: 1, value: { type: "string", value } }, macroCalls: new Map() });
    const differ: string[] = [];
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      // "é" prints as itself, so it only moves the string off any plain-ASCII path.
      if (printed(`a${ch}`).slice(0, -1) !== printed(`a${ch}é`).slice(0, -2))
        differ.push(`U+${c.toString(16)}`);
    }
    expect(differ).toEqual([]);
  });

  it("ignores whitespace and comments", () => {
    expect(canonical('event.type == "tool" // first\n && event.is_error')).toBe(
      canonical('event.type=="tool"&&event.is_error'),
    );
  });

  it("gives different text to expressions that mean different things", () => {
    const forms = [
      "a - b - c",
      "a - (b - c)",
      "a && b || c",
      "a && (b || c)",
      "-(1)",
      "-1",
      "'1'",
      "b'1'",
      "1u",
      "1",
    ];
    expect(new Set(forms.map(canonical)).size).toBe(forms.length);
  });

  it("round-trips generated trees: parse(print(a)) is a", () => {
    fc.assert(
      fc.property(recipe, (r) => {
        const ast = build(r);
        const text = print(ast);
        const again = parse(text);
        if (!again.ok) throw new Error(`printed form does not parse: ${text}\n${again.errors[0]?.message}`);
        expect(shape(again.ast.expr)).toEqual(shape(ast.expr));
      }),
      { numRuns: runs(2000) },
    );
  });

  it("is idempotent on its own output", () => {
    fc.assert(
      fc.property(recipe, (r) => {
        const text = print(build(r));
        expect(canonical(text)).toBe(text);
      }),
      { numRuns: runs(1000) },
    );
  });

  it("prints the same text whatever whitespace and comments stand between tokens", () => {
    const gap = fc.constantFrom(" ", "\n", "\t", "\r\n", "  // note\n", "\f");
    fc.assert(
      fc.property(recipe, fc.infiniteStream(gap), (r, gaps) => {
        const text = print(build(r));
        const tokens = celLexer.tokenize(text).tokens;
        let spaced = "";
        let last = 0;
        for (const t of tokens) {
          spaced += `${text.slice(last, t.startOffset)}${gaps.next().value}${t.image}`;
          last = t.startOffset + t.image.length;
        }
        expect(canonical(spaced + text.slice(last))).toBe(text);
      }),
      { numRuns: runs(1000) },
    );
  });
});
