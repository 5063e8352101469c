import { describe, expect, it } from "vitest";
import {
  type Expr,
  type Literal,
  parse,
  parseOrThrow,
  print,
  renderDiagnostics,
} from "../../src/cel/index.js";

function lit(text: string): Literal {
  const e = parseOrThrow(text).expr;
  if (e.kind !== "literal") throw new Error(`${text} is not a literal: ${e.kind}`);
  return e.value;
}

function errorOf(text: string): string {
  const r = parse(text);
  if (r.ok) throw new Error(`${text} parsed`);
  return renderDiagnostics(r.source, r.errors);
}

const canonical = (text: string): string => print(parseOrThrow(text));

describe("literals", () => {
  it("reads decimal and hex ints, exactly, beyond 2^53", () => {
    expect(lit("42")).toEqual({ type: "int", value: 42n });
    expect(lit("0x1F")).toEqual({ type: "int", value: 31n });
    expect(lit("9223372036854775807")).toEqual({ type: "int", value: 9223372036854775807n });
    expect(lit("-9223372036854775808")).toEqual({ type: "int", value: -9223372036854775808n });
  });

  it("rejects ints and uints out of 64-bit range", () => {
    expect(errorOf("9223372036854775808")).toContain("invalid int literal");
    expect(errorOf("0xFFFFFFFFFFFFFFFFF")).toContain("invalid int literal");
    expect(errorOf("18446744073709551616u")).toContain("invalid uint literal");
    expect(lit("18446744073709551615u")).toEqual({ type: "uint", value: 18446744073709551615n });
  });

  it("reads uints with u and U, decimal and hex", () => {
    expect(lit("1u")).toEqual({ type: "uint", value: 1n });
    expect(lit("0xFU")).toEqual({ type: "uint", value: 15n });
  });

  it("reads doubles with fractions and exponents, and rejects infinite ones", () => {
    expect(lit("1.5")).toEqual({ type: "double", value: 1.5 });
    expect(lit(".99")).toEqual({ type: "double", value: 0.99 });
    expect(lit("1e3")).toEqual({ type: "double", value: 1000 });
    expect(lit("2.5E-3")).toEqual({ type: "double", value: 0.0025 });
    expect(lit("-0.0")).toEqual({ type: "double", value: -0 });
    expect(errorOf("1.99e90000009")).toContain("invalid double literal");
  });

  it("reads every string escape the language defines", () => {
    expect(lit(String.raw`"\a\b\f\n\r\t\v\\\'\"\`\?"`)).toEqual({
      type: "string",
      value: "\x07\b\f\n\r\t\v\\'\"`?",
    });
    expect(lit(String.raw`"\x41\X42\101\u00ff\U0001F600"`)).toEqual({ type: "string", value: "ABAÿ😀" });
  });

  it("takes raw and triple-quoted strings as written", () => {
    expect(lit(String.raw`r"\n"`)).toEqual({ type: "string", value: "\\n" });
    expect(lit(String.raw`R'\x'`)).toEqual({ type: "string", value: "\\x" });
    expect(lit('"""a\n"b"\n"""')).toEqual({ type: "string", value: 'a\n"b"\n' });
    expect(lit("'''x''x'''")).toEqual({ type: "string", value: "x''x" });
    expect(lit('r"""\\d+\n"""')).toEqual({ type: "string", value: "\\d+\n" });
  });

  it("reads bytes: UTF-8 of characters, one octet per \\x or octal escape, raw forms", () => {
    expect(lit("b'ÿ'")).toEqual({ type: "bytes", value: Uint8Array.from([0xc3, 0xbf]) });
    expect(lit(String.raw`b'\377'`)).toEqual({ type: "bytes", value: Uint8Array.from([0xff]) });
    expect(lit(String.raw`b"\xff"`)).toEqual({ type: "bytes", value: Uint8Array.from([0xff]) });
    expect(lit(String.raw`br'\x'`)).toEqual({ type: "bytes", value: new TextEncoder().encode("\\x") });
    expect(lit(`B"""a\nb"""`)).toEqual({ type: "bytes", value: new TextEncoder().encode("a\nb") });
  });

  it("rejects \\u in bytes, surrogate code points, and unknown escapes", () => {
    expect(errorOf(String.raw`b"\u0041"`)).toContain("not allowed in bytes");
    expect(errorOf(String.raw`'\udead'`)).toContain("invalid unicode code point");
    expect(errorOf(String.raw`'\ud83d\ude00'`)).toContain("invalid unicode code point");
    expect(errorOf(String.raw`"\q"`)).toContain("invalid escape sequence '\\q'");
    expect(errorOf(String.raw`"\xFh"`)).toContain("expected 2 hex digits");
    expect(errorOf(String.raw`"\400"`)).toContain("invalid escape sequence");
  });

  it("reads null, true and false", () => {
    expect(lit("null")).toEqual({ type: "null" });
    expect(lit("true")).toEqual({ type: "bool", value: true });
    expect(lit("false")).toEqual({ type: "bool", value: false });
  });
});

describe("operators", () => {
  it("binds by the specification's precedence", () => {
    expect(canonical("a || b && c == d + e * -f")).toBe("a || b && c == d + e * -f");
    expect(canonical("(a || b) && c")).toBe("(a || b) && c");
    expect(canonical("(a + b) * c")).toBe("(a + b) * c");
    expect(canonical("a - (b - c)")).toBe("a - (b - c)");
    expect(canonical("(a - b) - c")).toBe("a - b - c");
    expect(canonical("a in [1] == true")).toBe("a in [1] == true");
  });

  it("makes ?: right-associative and its branches conditional-or expressions", () => {
    expect(canonical("a ? b : c ? d : e")).toBe("a ? b : c ? d : e");
    expect(canonical("(a ? b : c) ? d : e")).toBe("(a ? b : c) ? d : e");
    expect(errorOf("a ? b ? c : d : e")).toContain("Syntax error");
  });

  it("balances && and || chains as the reference parser does", () => {
    const e = parseOrThrow("a && b && c && d").expr as Extract<Expr, { kind: "call" }>;
    expect(e.fn).toBe("_&&_");
    expect(e.args.map((x) => x.kind)).toEqual(["call", "call"]);
  });

  it("folds one minus into a numeric literal, and cancels even runs of - and !", () => {
    expect(lit("-1")).toEqual({ type: "int", value: -1n });
    expect(canonical("--x")).toBe("x");
    expect(canonical("!!x")).toBe("x");
    expect(canonical("---1")).toBe("-(1)");
    expect(canonical("-1u")).toBe("-1u");
    expect(canonical("-(1)")).toBe("-(1)");
    expect(canonical("!-1")).toBe("!-1");
    expect(errorOf("!-x")).toContain("mismatched input '-' after '!'");
  });
});

describe("names, members and constructions", () => {
  it("reads leading-dot names, selects, indexes and calls", () => {
    expect(canonical(".a.b[0].c(1, 2)")).toBe(".a.b[0].c(1, 2)");
    expect(canonical("f()")).toBe("f()");
  });

  it("reads message construction from a qualified name only", () => {
    expect(canonical("a.b.C{f: 1, g: 2,}")).toBe("a.b.C{f: 1, g: 2}");
    expect(canonical(".google.protobuf.Int64Value{value: 1}")).toBe(".google.protobuf.Int64Value{value: 1}");
    expect(errorOf("f(){a: 1}")).toContain("message construction needs a type name");
    expect(errorOf("TestAllTypes{}()")).toContain("Syntax error");
  });

  it("reads lists and maps with trailing commas", () => {
    expect(canonical("[1, 2,]")).toBe("[1, 2]");
    expect(canonical("{'a': 1,}")).toBe('{"a": 1}');
    expect(canonical("[,]")).toBe("[]");
  });

  it("reads backtick-quoted field names", () => {
    expect(canonical("m.`content-type`")).toBe("m.`content-type`");
    expect(canonical("M{`in`: true}.`in`")).toBe("M{`in`: true}.`in`");
  });

  it("rejects reserved identifiers and keywords as names", () => {
    expect(errorOf("while")).toContain("reserved identifier: while");
    expect(errorOf("[1].map(var, var)")).toContain("reserved identifier: var");
    expect(errorOf("a.true")).toContain("Syntax error");
  });

  it("rejects optional syntax, which is an extension", () => {
    expect(errorOf("a.?b")).toContain("unsupported syntax '.?'");
    expect(errorOf("a[?b]")).toContain("unsupported syntax '[?'");
    expect(errorOf("[?a]")).toContain("unsupported syntax '?'");
  });
});

describe("macros", () => {
  it("expands the standard macros into comprehensions and prints them back as calls", () => {
    for (const text of [
      "l.all(x, x > 0)",
      "l.exists(x, x > 0)",
      "l.exists_one(x, x > 0)",
      "l.map(x, x * 2)",
      "l.map(x, x > 0, x * 2)",
      "l.filter(x, x > 0)",
    ]) {
      const ast = parseOrThrow(text);
      expect(ast.expr.kind).toBe("comprehension");
      expect(print(ast)).toBe(text);
    }
    expect(parseOrThrow("has(a.b)").expr).toMatchObject({ kind: "select", testOnly: true, field: "b" });
  });

  it("keeps the global exists(sel, within) an ordinary call", () => {
    const e = parseOrThrow('exists({"type": "closed"}, duration("1h"))').expr;
    expect(e).toMatchObject({ kind: "call", fn: "exists", target: undefined });
  });

  it("rejects misused macros with the reference's messages", () => {
    expect(errorOf("has(m)")).toContain("invalid argument to has() macro");
    expect(errorOf("m.filter(a.b, false)")).toContain("argument is not an identifier");
    expect(errorOf("1.all(2, 3)")).toContain("argument must be a simple name");
    expect(errorOf("m.map(__result__, 1)")).toContain("iteration variable overwrites accumulator variable");
  });
});

describe("errors", () => {
  it("renders each with its line, column and a caret under the token", () => {
    expect(errorOf('event.type == "tool" &&\n  event.outcome = 1')).toBe(
      "ERROR: <input>:2:17: Syntax error: unexpected character '='\n |   event.outcome = 1\n | ................^",
    );
  });

  it("counts columns in code points", () => {
    expect(errorOf("'😀' + while")).toContain("ERROR: <input>:1:7: reserved identifier: while");
  });

  it("reports several independent errors where recovery allows", () => {
    const r = parse("a.while(1) + while + (1 +)");
    expect(r.ok).toBe(false);
    const many = parse("[1 2] + f(,)");
    expect(!many.ok && many.errors.length).toBeGreaterThanOrEqual(2);
    const lexical = parse("a | b & c");
    expect(!lexical.ok && lexical.errors.map((e) => e.message)).toEqual([
      "Syntax error: unexpected character '|'",
      "Syntax error: unexpected character '&'",
    ]);
  });

  it("names the file and key it was given", () => {
    const r = parse("1 +", { description: "rules/churn.toml:when" });
    expect(!r.ok && renderDiagnostics(r.source, r.errors)).toMatch(/^ERROR: rules\/churn.toml:when:1:4: /);
  });
});
