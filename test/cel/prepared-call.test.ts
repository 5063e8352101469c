import { describe, expect, it } from "vitest";
import {
  type CallSite,
  CelError,
  CelMap,
  compile,
  type Env,
  type FunctionDecl,
  standardEnv,
  T,
  type Value,
} from "../../src/cel/index.js";

/**
 * `lookup(sel, key)`: the value `sel` holds at `key`, plus a tag from the activation. Declared twice,
 * once general and once with `prepare`, so every expression can be run both ways side by side.
 */
function lookup(prepared: boolean, sites: CallSite[]): FunctionDecl {
  const general = (vars: Record<string, unknown>, sel: Value | undefined, key: Value | undefined) => {
    if (!(sel instanceof CelMap) || typeof key !== "string") return new CelError("bad lookup");
    const v = sel.get(key);
    return v === undefined ? new CelError(`no ${key}`) : `${String(v)}${String(vars.tag)}`;
  };
  return {
    name: "lookup",
    overloads: [
      {
        id: "lookup_map_string",
        params: [T.map(T.string, T.dyn), T.string],
        result: T.string,
        cost: { fixed: 7 },
        contextual: general,
        ...(prepared
          ? {
              prepare: (site: CallSite) => {
                sites.push(site);
                const keys = site.recordKeys[0];
                if (keys === undefined) return undefined;
                return (vars, args) => {
                  const values = args[0] as readonly Value[];
                  const key = args[1];
                  const at = typeof key === "string" ? keys.indexOf(key) : -1;
                  if (at < 0) return new CelError(`no ${String(key)}`);
                  return `${String(values[at])}${String(vars.tag)}`;
                };
              },
            }
          : {}),
      },
    ],
  };
}

const envOf = (prepared: boolean, sites: CallSite[] = []): Env =>
  standardEnv.extend({
    variables: [
      { name: "s", type: T.string },
      { name: "n", type: T.int },
      { name: "tag", type: T.string },
    ],
    functions: [lookup(prepared, sites)],
  });

const EXPRESSIONS = [
  'lookup({"a": s, "b": "x"}, "a")',
  'lookup({"a": s, "b": "x"}, "b")',
  'lookup({"a": s, "b": "x"}, s)',
  'lookup({"a": s + s, "b": 1 / n}, "a")',
  'lookup({"a": 1 / n, "b": s}, "b")',
  'lookup({"a": s, "a": s}, "a")',
  'lookup({s: "x"}, s)',
  'lookup({"a": "x"}, "z")',
  'lookup({}, "a")',
  'size(lookup({"a": s}, "a")) + size(lookup({"b": s, "c": "cc"}, "c"))',
];

describe("a contextual call prepared for its site", () => {
  const vars = [
    { s: "v", n: 1n, tag: "!" },
    { s: "", n: 0n, tag: "?" },
  ];
  for (const text of EXPRESSIONS) {
    it(`gives the value, error and cost of the general call: ${text}`, () => {
      const general = compile(text, envOf(false));
      const prepared = compile(text, envOf(true));
      if (!general.ok || !prepared.ok) throw new Error(`${text} does not compile`);
      for (const v of vars) {
        const a = general.program.evaluate(v);
        const b = prepared.program.evaluate(v);
        expect(b.kind).toBe(a.kind);
        expect(b.cost).toBe(a.cost);
        if (a.kind === "value" && b.kind === "value") expect(b.value).toEqual(a.value);
        if (a.kind === "error" && b.kind === "error") expect(b.error.message).toBe(a.error.message);
        // A limit one unit below the general call's cost stops the prepared one too.
        expect(prepared.program.evaluate(v, a.cost - 1).kind).toBe("cost_exceeded");
      }
    });
  }

  it("sees literal keys as a record and constants as values, and only those", () => {
    const sites: CallSite[] = [];
    const compiled = compile('lookup({"a": s, "b": "x"}, "a") + lookup({s: "x"}, s)', envOf(true, sites));
    expect(compiled.ok).toBe(true);
    expect(sites.map((s) => [s.recordKeys, s.constants])).toEqual([
      [
        [["a", "b"], undefined],
        [undefined, "a"],
      ],
      [
        [undefined, undefined],
        [undefined, undefined],
      ],
    ]);
  });
});
