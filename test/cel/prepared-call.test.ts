import { describe, expect, it } from "vitest";
import {
  type Activation,
  type CallSite,
  CelError,
  CelMap,
  compile,
  type Env,
  type FunctionDecl,
  type Layout,
  layoutOf,
  type Result,
  standardEnv,
  T,
  type Value,
} from "../../src/cel/index.js";

/**
 * `lookup(sel, key)`: the value `sel` holds at `key`, tagged. Declared twice, as a pure function of a
 * map and as a contextual one prepared per call site (reading the tag from the activation), so every
 * expression can be run both ways side by side.
 */
const TAG = "!";
const found = (v: Value | undefined, key: Value | undefined): Result =>
  v === undefined ? new CelError(`no ${String(key)}`) : `${String(v)}${TAG}`;

function lookup(prepared: boolean, sites: CallSite[]): FunctionDecl {
  const base = {
    id: "lookup_map_string",
    params: [T.map(T.string, T.dyn), T.string],
    result: T.string,
    cost: { fixed: 7 },
  };
  const pure = (sel: Value, key: Value) =>
    sel instanceof CelMap && typeof key === "string" ? found(sel.get(key), key) : new CelError("bad lookup");
  const contextual = (site: CallSite) => {
    sites.push(site);
    const keys = site.recordKeys[0];
    return (vars: Activation, args: readonly Value[]): Result => {
      const [sel, key] = args;
      if (vars.tag !== TAG) return new CelError("the activation did not reach the call");
      if (keys === undefined) return pure(sel as Value, key as Value);
      const at = typeof key === "string" ? keys.indexOf(key) : -1;
      return found(at < 0 ? undefined : (sel as readonly Value[])[at], key);
    };
  };
  return {
    name: "lookup",
    overloads: [prepared ? { ...base, prepare: contextual } : { ...base, impl: pure }],
  };
}

const EV_FIELDS = { x: { type: T.string }, y: { type: T.string }, b: { type: T.bool } };

const envOf = (prepared: boolean, sites: CallSite[] = []): Env =>
  standardEnv.extend({
    variables: [
      { name: "s", type: T.string },
      { name: "n", type: T.int },
      { name: "tag", type: T.string },
      { name: "ev", type: T.object("Ev") },
    ],
    objectTypes: [{ name: "Ev", fields: EV_FIELDS }],
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
  // Values known at compile time, free or charged (a folded call), between computed ones.
  'lookup({"a": "x", "b": string(duration("1h")), "c": s, "d": true, "e": s + "y"}, "e")',
  'lookup({"a": string(duration("1h")), "b": s}, string(int("1") + n))',
  'size(lookup({"a": s}, "a")) + size(lookup({"b": s, "c": "cc"}, "c"))',
  // Under dyn the overload is chosen per call: the map arrives built, as for a computed map.
  'lookup(dyn({"a": s}), "a")',
  // A record of field reads is one segment, charged at once when it fits, else part by part.
  'lookup({"a": ev.x, "b": ev.y}, "b")',
  'lookup({"a": ev.x, "k": "c", "b": ev.y, "c": ev.b}, "a")',
];

describe("a contextual call, prepared for its site", () => {
  const layout = layoutOf(EV_FIELDS) as Layout;
  const events = [{ x: "p", y: "q", b: true }, { x: "p", y: 3 }, { x: 4 }, {}];
  const vars = [
    { s: "v", n: 1n, tag: TAG },
    { s: "", n: 0n, tag: TAG },
    ...events.flatMap((ev) => [
      { s: "v", n: 1n, tag: TAG, ev },
      { s: "v", n: 1n, tag: TAG, ev: layout.layOut(ev) },
    ]),
  ];
  for (const text of EXPRESSIONS) {
    it(`gives the value, error and cost of the same function as a pure one: ${text}`, () => {
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
        // Under every limit below the general call's cost, the prepared one stops where it stops.
        for (let limit = 0; limit < a.cost; limit++) {
          const x = general.program.evaluate(v, limit);
          const y = prepared.program.evaluate(v, limit);
          expect(y.kind).toBe("cost_exceeded");
          expect([y.kind, y.cost]).toEqual([x.kind, x.cost]);
        }
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
