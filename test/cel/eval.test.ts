import { describe, expect, it } from "vitest";
import {
  type Activation,
  CelMap,
  compile,
  type Evaluation,
  type ObjectTypeDecl,
  renderDiagnostics,
  standardEnv,
  T,
  Timestamp,
  UInt,
  type Value,
} from "../../src/cel/index.js";

const runEvent: ObjectTypeDecl = {
  name: "RunEvent",
  fields: {
    type: { type: T.string },
    outcome: { type: T.string },
    exit_code: { type: T.int },
    is_error: { type: T.bool },
    paths: { type: T.list(T.string) },
  },
};
const env = standardEnv.extend({
  variables: [
    { name: "event", type: T.object("RunEvent") },
    { name: "now", type: T.timestamp },
    { name: "x", type: T.dyn },
  ],
  objectTypes: [runEvent],
});

function run(text: string, vars: Activation = {}, limit?: number): Evaluation {
  const c = compile(text, env);
  if (!c.ok) throw new Error(renderDiagnostics(c.source, c.errors));
  return c.program.evaluate(vars, limit);
}

function value(text: string, vars: Activation = {}): Value {
  const r = run(text, vars);
  if (r.kind !== "value") throw new Error(`${text}: ${r.kind === "error" ? r.error.message : r.kind}`);
  return r.value;
}

function errorOf(text: string, vars: Activation = {}): string {
  const r = run(text, vars);
  if (r.kind !== "error") throw new Error(`${text}: expected an error, got ${r.kind}`);
  return r.error.message;
}

function checkError(text: string): string {
  const c = compile(text, env);
  if (c.ok) throw new Error(`${text} compiled`);
  return renderDiagnostics(c.source, c.errors);
}

describe("the checker", () => {
  it("names an undefined field and points at it", () => {
    expect(checkError('event.outcom == "failed"')).toBe(
      "ERROR: <input>:1:6: undefined field 'outcom'\n | event.outcom == \"failed\"\n | .....^",
    );
  });

  it("names the operator and argument types when no overload matches", () => {
    expect(checkError('"a" + 1')).toContain(
      "found no matching overload for '_+_' applied to '(string, int)'",
    );
    expect(checkError("'a'.startsWith(1)")).toContain(
      "found no matching overload for 'startsWith' applied to 'string.(int)'",
    );
  });

  it("rejects mixed numeric equality when both types are known, and allows it under dyn", () => {
    expect(checkError("1 == 1.0")).toContain(
      "found no matching overload for '_==_' applied to '(int, double)'",
    );
    expect(value("dyn(1.0) == 1")).toBe(true);
    expect(value("dyn(1u) == 1")).toBe(true);
    expect(value("dyn(3u) in [5, 4, 3]")).toBe(true);
  });

  it("reports an undeclared variable", () => {
    expect(checkError("nope > 1")).toContain("undeclared reference to 'nope' (in container '')");
  });

  it("types the result", () => {
    const c = compile("[1, 2].map(v, v * 2)", env);
    expect(c.ok && c.program.resultType).toEqual(T.list(T.int));
    const d = compile("{'a': 1, 'b': 'x'}", env);
    expect(d.ok && d.program.resultType).toEqual(T.map(T.string, T.dyn));
  });
});

describe("evaluation", () => {
  it("reads declared object fields, unset ones as their zero value", () => {
    const event = { type: "tool", paths: ["internal/a.go"] };
    expect(value('event.type == "tool"', { event })).toBe(true);
    expect(value("event.exit_code == 0", { event })).toBe(true);
    expect(value('event.outcome == ""', { event })).toBe(true);
    expect(value("event.is_error", { event })).toBe(false);
    expect(value('event.paths.exists(p, p.startsWith("internal/"))', { event })).toBe(true);
    expect(value("size(event.paths)", { event: {} })).toBe(0n);
  });

  it("does 64-bit integer arithmetic with overflow errors", () => {
    expect(errorOf("9223372036854775807 + 1")).toBe("integer overflow");
    expect(errorOf("-9223372036854775808 - 1")).toBe("integer overflow");
    expect(errorOf("-(-9223372036854775807 - 1)")).toBe("integer overflow");
    expect(value("9223372036854775807 - 1")).toBe(9223372036854775806n);
    expect(value("7 / -2")).toBe(-3n);
    expect(value("-7 % 2")).toBe(-1n);
    expect(errorOf("1 / 0")).toBe("divide by zero");
    expect(errorOf("1 % 0")).toBe("modulus by zero");
    expect(errorOf("0u - 1u")).toBe("integer overflow");
    expect(value("1 / 2")).toBe(0n);
    expect(value("1.0 / 2.0")).toBe(0.5);
  });

  it("absorbs errors in && and || when the other side decides, in either order", () => {
    expect(value("false && (1 / 0 > 0)")).toBe(false);
    expect(value("(1 / 0 > 0) && false")).toBe(false);
    expect(value("(1 / 0 > 0) || true")).toBe(true);
    expect(errorOf("(1 / 0 > 0) && true")).toBe("divide by zero");
    expect(errorOf("(1 / 0 > 0) ? 1 : 2")).toBe("divide by zero");
    expect(value("true ? 1 : 1 / 0")).toBe(1n);
  });

  it("keeps JS prototype names plain map keys", () => {
    expect(value("{'__proto__': 1}['__proto__']")).toBe(1n);
    expect(value("{'constructor': 2}.constructor")).toBe(2n);
    expect(errorOf("{'a': 1}['toString']")).toContain("no such key");
    expect(value("has({'__proto__': 1}.__proto__)")).toBe(true);
  });

  it("does not take Object.prototype's names for declared types or variables", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"])
      expect(checkError(`${name} == int`)).toContain(`undeclared reference to '${name}'`);
  });

  it("rejects duplicate map keys, across numeric types too", () => {
    expect(errorOf("{0: 1, 0u: 2}")).toContain("repeated key");
    const m = value("{1: 'a', 2u: 'b'}") as CelMap;
    expect(m.get(new UInt(1n))).toBe("a");
  });

  it("counts string size in code points", () => {
    expect(value("size('😀a')")).toBe(2n);
  });

  it("binds now from the activation", () => {
    expect(
      value('now > timestamp("2026-01-01T00:00:00Z")', { now: new Timestamp(1_800_000_000_000_000_000n) }),
    ).toBe(true);
  });

  it("evaluates the comprehension macros", () => {
    expect(value("[1, 2, 3].all(v, v > 0)")).toBe(true);
    expect(value("[1, 2, 3].exists_one(v, v > 2)")).toBe(true);
    expect(value("[1, 2, 3].filter(v, v % 2 == 1)")).toEqual([1n, 3n]);
    expect(value("[1, 2, 3].map(v, v > 1, v * 10)")).toEqual([20n, 30n]);
    expect(value("{'a': 1}.exists(k, k == 'a')")).toBe(true);
    expect(value("[0, 1].exists(v, 1 / v > 0)")).toBe(true);
    expect(errorOf("[0].all(v, 1 / v > 0)")).toBe("divide by zero");
  });

  it("dispatches at run time under dyn", () => {
    expect(value("dyn(1) + dyn(2)")).toBe(3n);
    expect(value("dyn('a') + dyn('b')")).toBe("ab");
    expect(errorOf("dyn(1) + dyn('b')")).toContain("no such overload");
    expect(value("x.a", { x: CelMap.from([["a", 5n]]) as CelMap })).toBe(5n);
  });

  it("matches with RE2 semantics, anywhere in the string, in linear time", () => {
    expect(value("'hubba'.matches('ubb')")).toBe(true);
    expect(value("'internal/a.go'.matches('^internal/.*[.]go$')")).toBe(true);
    const started = performance.now();
    expect(value(`x.matches('(a+)+$')`, { x: `${"a".repeat(50_000)}b` })).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(checkError("'a'.matches('(?=a)')")).toContain("invalid or unsupported Perl syntax");
  });
});

describe("host data and the review's regressions", () => {
  const hostEnv = env.extend({
    variables: [
      { name: "a.b", type: T.string },
      { name: "constructor", type: T.string },
      { name: "ls", type: T.list(T.string) },
      { name: "lo", type: T.list(T.object("RunEvent")) },
      { name: "mi", type: T.map(T.int, T.string) },
      { name: "lf", type: T.list(T.double) },
      { name: "d", type: T.dyn },
    ],
  });
  const hostValue = (text: string, vars: Activation): Value | string => {
    const c = compile(text, hostEnv);
    if (!c.ok) throw new Error(renderDiagnostics(c.source, c.errors));
    const r = c.program.evaluate(vars);
    return r.kind === "value" ? r.value : r.kind === "error" ? `error: ${r.error.message}` : r.kind;
  };

  it("compares objects field by field, an unset field equal to its zero value", () => {
    expect(value("RunEvent{exit_code: 1} == RunEvent{exit_code: 1}")).toBe(true);
    expect(value("RunEvent{} == RunEvent{outcome: ''}")).toBe(true);
    expect(value("RunEvent{exit_code: 1} == RunEvent{exit_code: 2}")).toBe(false);
    expect(value("event == RunEvent{exit_code: 1}", { event: { exit_code: 1 } })).toBe(true);
  });

  it("resolves a qualified variable even where a loop variable has its last name", () => {
    expect(hostValue("[1].map(b, a.b)", { "a.b": "x" })).toEqual(["x"]);
  });

  it("reads only the activation's own properties", () => {
    expect(hostValue("constructor == ''", {})).toBe(true);
  });

  it("checks list elements against the declared type instead of throwing", () => {
    expect(hostValue("ls.size() == 1", { ls: [1] })).toMatch(/^error: host value/);
    expect(hostValue("lo.exists(e, e.exit_code == 1)", { lo: [null] })).toBe(false);
    expect(hostValue("lo.exists(e, e.exit_code == 1)", { lo: [5] })).toMatch(/^error: host value/);
  });

  it("reads a host object as a map with the declared key type", () => {
    expect(hostValue("mi[1] == 'a' && 1 in mi && mi.exists(k, k > 0)", { mi: { 1: "a" } })).toBe(true);
  });

  it("does not let identity hide a NaN inside a list", () => {
    const lf = [Number.NaN];
    expect(hostValue("lf == lf", { lf })).toBe(false);
  });

  it("refuses uint of a negative double", () => {
    expect(errorOf("uint(-0.5)")).toContain("range");
  });

  it("reads an untyped JSON object as a map(string, dyn)", () => {
    expect(
      hostValue('d["a"] == 1.0 && "a" in d && d.size() == 2 && has(d.b)', { d: { a: 1, b: null } }),
    ).toBe(true);
    expect(hostValue("type(d) == map", { d: {} })).toBe(true);
  });
});
