/**
 * The compiler's fused closures over a laid-out object (a chain's leading field tests read with one
 * check of the object and charged as one segment, a record of field reads, an int call compared with a
 * constant, a quantifier over a list field charged as one segment) against the general closures, which
 * run when the same event arrives as a plain object: the same value or error, the same cost, and under
 * every limit up to that cost, `cost_exceeded` at the same point. Events have each field unset, a
 * string (empty, short, long, equal to a constant, multi-byte), or a value of another type.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Activation,
  compile,
  type Evaluation,
  type FieldDecl,
  type Layout,
  layoutOf,
  type Program,
  standardEnv,
  T,
  type Value,
} from "../../src/cel/index.js";
import { runs } from "../property-runs.js";

const FIELDS: Record<string, FieldDecl> = {
  type: { type: T.string },
  outcome: { type: T.string },
  harness: { type: T.string },
  digest: { type: T.string },
  is_error: { type: T.bool },
  paths: { type: T.list(T.string) },
};

/** A windowed primitive as the rules core declares it: contextual, fixed cost, answering a constant. */
const primitive = (name: string, params: number, value: bigint | boolean, cost: number) => ({
  name,
  overloads: [
    {
      id: `${name}_${params}`,
      params:
        params === 2 ? [T.map(T.string, T.dyn), T.duration] : [T.string, T.map(T.string, T.dyn), T.duration],
      result: typeof value === "boolean" ? T.bool : T.int,
      prepare: () => (_vars: Activation, args: readonly Value[]) =>
        // The record reached the call whole: its values decide the answer, so a wrong one shows.
        typeof value === "bigint"
          ? BigInt((args[params - 2] as readonly Value[]).filter((v) => v !== "").length)
          : value,
      cost: { fixed: cost },
    },
  ],
});

const env = standardEnv.extend({
  variables: [{ name: "event", type: T.object("Ev") }],
  objectTypes: [{ name: "Ev", fields: FIELDS }],
  functions: [
    primitive("count", 2, 0n, 100),
    primitive("distinct", 3, 0n, 7),
    primitive("exists", 2, false, 3),
  ],
});

const LONG = "collision_started";
const EXPRESSIONS = [
  `event.type == "${LONG}" && event.outcome == "file"`,
  `event.type == "${LONG}" || event.outcome != ""`,
  'event.type == "closed" && event.outcome == "failed" && event.digest != "" && event.is_error',
  `event.type == "closed" && count({"type": "closed", "harness": event.harness, "outcome": "${LONG}"}, duration("24h")) >= 2`,
  'event.type == "tool" && event.is_error && distinct("run", {"type": "tool", "repo": event.harness, "digest": event.digest}, duration("2h")) >= 1 && !exists({"type": "tool", "digest": event.digest}, duration("2h"))',
  'count({"harness": event.harness, "digest": event.digest}, duration("1h")) < 2 || event.type == "x"',
  'event.type == "tool" && event.outcome != "" && event.paths.exists(p, p.startsWith("internal/"))',
  'event.type != "closed" || event.is_error',
  'event.paths.exists(p, p.startsWith("internal/"))',
  'event.paths.all(p, !p.endsWith("_test.go"))',
  'event.type == "tool" && event.paths.exists(p, p.endsWith("é.go"))',
];

const STRINGS = [
  "",
  "x",
  "closed",
  "tool",
  "failed",
  "file",
  LONG,
  "collision_startex",
  "ééééééééééééé",
  "internal/a.go",
];
const PATHS = ["internal/a.go", "cmd/x_test.go", "é/é.go", "", "internal/", "a_test.go"];
const OTHER: unknown[] = [7, true, null, undefined, ["x"]];

const fieldValue = (name: string): fc.Arbitrary<unknown> => {
  const own =
    name === "paths"
      ? fc.oneof(fc.array(fc.constantFrom(...PATHS), { maxLength: 6 }), fc.constant(["ok", 3]))
      : name === "is_error"
        ? fc.boolean()
        : fc.constantFrom(...STRINGS);
  return fc.oneof({ weight: 4, arbitrary: own }, { weight: 1, arbitrary: fc.constantFrom(...OTHER) });
};

const events = fc.record(
  Object.fromEntries(Object.keys(FIELDS).map((k) => [k, fieldValue(k)])) as Record<
    string,
    fc.Arbitrary<unknown>
  >,
  { requiredKeys: [] },
);

const outcome = (r: Evaluation) =>
  r.kind === "value"
    ? { kind: r.kind, value: r.value, cost: r.cost }
    : r.kind === "error"
      ? { kind: r.kind, message: r.error.message, cost: r.cost }
      : { kind: r.kind, cost: r.cost };

/** The outcome with no limit, then under every limit up to its cost. */
const outcomes = (p: Program, vars: Activation) => {
  const whole = p.evaluate(vars);
  const under = [...Array(Math.ceil(whole.cost) + 1).keys()].map((limit) => outcome(p.evaluate(vars, limit)));
  return [outcome(whole), ...under];
};

describe("fused closures over a laid-out event answer as the general ones over the plain event", () => {
  const layout = layoutOf(FIELDS) as Layout;
  for (const text of EXPRESSIONS) {
    it(text, () => {
      const c = compile(text, env, { resultType: T.bool });
      if (!c.ok) throw new Error(`${text}: ${c.errors[0]?.message}`);
      const program = c.program;
      fc.assert(
        fc.property(events, (ev) => {
          expect(outcomes(program, { event: layout.layOut(ev) })).toEqual(outcomes(program, { event: ev }));
        }),
        { numRuns: runs(150) },
      );
    });
  }
});
