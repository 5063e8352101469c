import fc from "fast-check";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { loadRuleFile } from "../../src/core/load-rule.js";
import {
  decodeStringValue,
  findStringValue,
  locateInStringValue,
  type StringValueSource,
} from "../../src/core/toml-string-map.js";
import { runs } from "../property-runs.js";

const found = (text: string, key = "when"): StringValueSource => {
  const s = findStringValue(text, key);
  if (s === undefined) throw new Error(`no ${key} in ${text}`);
  return s;
};

/** The character the file has at a 1-based line and code-point column. */
const charAt = (text: string, line: number, column: number): string =>
  [...(text.split(/\r\n|\r|\n/)[line - 1] ?? "")][column - 1] ?? "";

describe("TOML string positions", () => {
  it("decodes what smol-toml decodes, for each kind of string", () => {
    const text = [
      'a = "x \\"q\\" \\u00e9 \\U0001F600 \\t \\\\"',
      "b = 'lit \"q\" \\n'",
      'c = """',
      "line one",
      "  two \\",
      '     three""""',
      "d = '''",
      "raw \\n '' x'''",
    ].join("\n");
    const doc = parseToml(text) as Record<string, string>;
    for (const key of ["a", "b", "c", "d"]) expect(decodeStringValue(found(text, key))).toBe(doc[key]);
  });

  it("maps an offset past escapes to the file column of its character", () => {
    const text = 'name = "x"\nwhen = "event.type == \\"t\\u00e9\\" && bad"\n';
    const s = found(text);
    const when = decodeStringValue(s);
    const bad = when.indexOf("bad");
    expect(locateInStringValue(s, bad)).toEqual({
      line: 2,
      column: (text.split("\n")[1] ?? "").indexOf("bad") + 1,
    });
    // The escaped quote points at its backslash; the end points at the closing quote.
    const q = locateInStringValue(s, when.indexOf('"'));
    expect(charAt(text, q.line, q.column)).toBe("\\");
    const end = locateInStringValue(s, when.length);
    expect(charAt(text, end.line, end.column)).toBe('"');
  });

  it("follows a multi-line string across lines and a line-ending backslash", () => {
    const text = 'when = """\nevent.type == "tool" \\\n    && oops"""';
    const s = found(text);
    expect(s).toMatchObject({ line: 2, column: 1 });
    const when = decodeStringValue(s);
    expect(locateInStringValue(s, when.indexOf("oops"))).toEqual({ line: 3, column: 8 });
  });

  it("gives the same positions in a file with CRLF line ends", () => {
    const lines = [
      'name = "churn"',
      "when = '''",
      'event.type == "closed"',
      '  && event.outcom == "x"',
      "'''",
    ];
    for (const sep of ["\n", "\r\n"]) {
      const s = found(lines.join(sep));
      expect(locateInStringValue(s, decodeStringValue(s).indexOf(".outcom"))).toEqual({
        line: 4,
        column: 11,
      });
    }
  });

  it("points every character of a generated basic string at itself or its escape", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), fc.nat(40), (value, pad) => {
        const text = `name = "x"\n${" ".repeat(pad % 5)}when = ${JSON.stringify(value)}\n`;
        const s = found(text);
        expect(decodeStringValue(s)).toBe(value);
        let i = 0;
        for (const own of value) {
          const { line, column } = locateInStringValue(s, i);
          const ch = charAt(text, line, column);
          expect(ch === "\\" || ch === own).toBe(true);
          i += own.length;
        }
      }),
      { numRuns: runs(200) },
    );
  });

  it("gives a compile error the column of its CEL token through the escapes", () => {
    const text = [
      'name = "churn"',
      'description = "x"',
      'on = "run_event"',
      'when = "event.type == \\"tool\\" && event.outcom == \\"failed\\""',
      'level = "notify"',
      'target = "harness"',
      'message = "m"',
    ].join("\n");
    const r = loadRuleFile("rules/churn.toml", text);
    expect(r).toMatchObject({ ok: false, problem: { reason: "compile", line: 4 } });
    const column = !r.ok ? (r.problem.column as number) : 0;
    // The checker reports a select at its dot: `.outcom`.
    expect(text.split("\n")[3]?.slice(column - 1)).toMatch(/^\.outcom/);
  });
});

describe("rule file key positions", () => {
  it("locates unknown keys written dotted, quoted or as a table, whatever characters they hold", () => {
    const at = (text: string) => {
      const r = loadRuleFile("rules/a.toml", text);
      return r.ok
        ? undefined
        : { line: r.problem.line, column: r.problem.column, message: r.problem.message };
    };
    expect(at('name = "a"\n"a(" = 1')).toEqual({ line: 2, column: 1, message: "unknown key a(" });
    expect(at('name = "a"\n  extra.k = 1')).toEqual({ line: 2, column: 3, message: "unknown key extra" });
    expect(at('name = "a"\n[constructor.prototype]\nx = 1')).toEqual({
      line: 2,
      column: 1,
      message: "unknown key constructor",
    });
  });
});
