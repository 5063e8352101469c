/**
 * `npm run bench:codegen-model`: what per-expression code generation would buy, measured, for the
 * design decision that issues 3 and 4 wait on. `src/cel` compiles to closures (the design fixes
 * that); this models the other way, a generator that writes one JS function per expression, by
 * writing out by hand what such a generator would emit for four expressions: straight-line code,
 * property reads by name, a charge before each step with the same units our compiler charges.
 *
 * The model must be faithful or its figures mean nothing, so before timing it checks, for each
 * expression, that the model and our program give the same value and cost, and that both stop with
 * `cost_exceeded` at every limit below that cost. Timed side by side with our program, the floor and
 * @marcbachmann/cel-js, on the events `bench/cel.bench.ts` uses.
 */

import { constantEqualityUnits } from "../src/cel/cost/calls.js";
import { CelError, compile, type Evaluation, T } from "../src/cel/index.js";
import { EVAL_BATCH, eventFor, FLOOR, type Fn, marc, now, ours } from "./cel-contenders.js";
import { type Measurement, measureSideBySide } from "./measure.js";

type Vars = { readonly event: unknown };
type Generated = (vars: Vars, limit: number) => Evaluation;

/** Thrown by a charge past the limit, caught at the function's end, as our program boundary does. */
const LIMIT = new Error("cost limit");

const value = (v: boolean, cost: number): Evaluation => ({ kind: "value", value: v, cost });
const result = (v: boolean | CelError, cost: number): Evaluation =>
  v instanceof CelError ? { kind: "error", error: v, cost } : value(v, cost);
const exceeded = (cost: number, limit: number): Evaluation => ({ kind: "cost_exceeded", cost, limit });

// Zero values and type errors of host fields, as our host readers give them.
type Fields = Record<string, unknown>;
const object = (o: unknown): Fields | CelError =>
  o === undefined || o === null ? {} : typeof o === "object" ? (o as Fields) : new CelError("not an object");
const str = (raw: unknown): string | CelError =>
  raw === undefined || raw === null ? "" : typeof raw === "string" ? raw : new CelError("not a string");
const bool = (raw: unknown): boolean | CelError =>
  raw === undefined || raw === null ? false : typeof raw === "boolean" ? raw : new CelError("not a bool");
const list = (raw: unknown): readonly unknown[] | CelError =>
  raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : new CelError("not a list");
/** Equality against a constant of at most ten units: 1, or 0 when either side is empty. */
const short = (x: string, text: string) => (x.length === 0 || text.length === 0 ? 0 : 1);

// The primitives as `cel-contenders.ts` binds them: constants.
const count = (_values: readonly unknown[]) => 3n;
const distinct = (_values: readonly unknown[]) => 2n;
const exists = (_values: readonly unknown[]) => false;

/** `a && b && …`'s error bookkeeping: the first error is kept, a false ends the chain. */
const MODEL: Record<string, Generated> = {
  // event.type == "collision_started" && event.scope == "file"
  "same-file-collision": (vars, limit) => {
    let c = 0;
    let err: CelError | undefined;
    try {
      const e = object(vars.event);
      if (e instanceof CelError) return result(e, c);
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      let a = e.type;
      if (typeof a !== "string") a = str(a);
      let v: boolean | CelError;
      if (a instanceof CelError) v = a;
      else {
        c += constantEqualityUnits(a as string, "collision_started", 17);
        if (!(c <= limit)) throw LIMIT;
        v = a === "collision_started";
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err = v;
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      a = e.scope;
      if (typeof a !== "string") a = str(a);
      if (a instanceof CelError) v = a;
      else {
        c += short(a as string, "file");
        if (!(c <= limit)) throw LIMIT;
        v = a === "file";
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err ??= v;
      return result(err ?? true, c);
    } catch (x) {
      if (x === LIMIT) return exceeded(c, limit);
      throw x;
    }
  },
  // event.type == "closed" && event.outcome == "budget_exceeded"
  //   && count({"type": "closed", "harness": event.harness, "outcome": "budget_exceeded"}, duration("24h")) >= 2
  "budget-exhaustion-recurring": (vars, limit) => {
    let c = 0;
    let err: CelError | undefined;
    try {
      const e = object(vars.event);
      if (e instanceof CelError) return result(e, c);
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      let a = e.type;
      if (typeof a !== "string") a = str(a);
      let v: boolean | CelError;
      if (a instanceof CelError) v = a;
      else {
        c += short(a as string, "closed");
        if (!(c <= limit)) throw LIMIT;
        v = a === "closed";
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err = v;
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      a = e.outcome;
      if (typeof a !== "string") a = str(a);
      if (a instanceof CelError) v = a;
      else {
        c += constantEqualityUnits(a as string, "budget_exceeded", 15);
        if (!(c <= limit)) throw LIMIT;
        v = a === "budget_exceeded";
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err ??= v;
      // The selector map (30), its computed value (2), the constant duration (1), the call (100).
      c += 30;
      if (!(c <= limit)) throw LIMIT;
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      let h = e.harness;
      if (typeof h !== "string") h = str(h);
      if (h instanceof CelError) v = h;
      else {
        c += 1;
        if (!(c <= limit)) throw LIMIT;
        c += 100;
        if (!(c <= limit)) throw LIMIT;
        const n = count(["closed", h, "budget_exceeded"]);
        c += 1;
        if (!(c <= limit)) throw LIMIT;
        v = n >= 2n;
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err ??= v;
      return result(err ?? true, c);
    } catch (x) {
      if (x === LIMIT) return exceeded(c, limit);
      throw x;
    }
  },
  // event.type == "tool" && event.action == "verify" && event.is_error
  //   && distinct("run", {…, "repo": event.repo, "digest": event.digest}, duration("2h")) >= 2
  //   && !exists({…, "repo": event.repo, "digest": event.digest}, duration("2h"))
  "repeated-verify-failure": (vars, limit) => {
    let c = 0;
    let err: CelError | undefined;
    try {
      const e = object(vars.event);
      if (e instanceof CelError) return result(e, c);
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      let a = e.type;
      if (typeof a !== "string") a = str(a);
      let v: boolean | CelError;
      if (a instanceof CelError) v = a;
      else {
        c += short(a as string, "tool");
        if (!(c <= limit)) throw LIMIT;
        v = a === "tool";
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err = v;
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      a = e.action;
      if (typeof a !== "string") a = str(a);
      if (a instanceof CelError) v = a;
      else {
        c += short(a as string, "verify");
        if (!(c <= limit)) throw LIMIT;
        v = a === "verify";
      }
      if (v === false) return value(false, c);
      if (v instanceof CelError) err ??= v;
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      let b = e.is_error;
      if (typeof b !== "boolean") b = bool(b);
      if (b === false) return value(false, c);
      if (b instanceof CelError) err ??= b;
      for (const negated of [false, true]) {
        c += 30;
        if (!(c <= limit)) throw LIMIT;
        c += 2;
        if (!(c <= limit)) throw LIMIT;
        let r = e.repo;
        if (typeof r !== "string") r = str(r);
        if (r instanceof CelError) v = r;
        else {
          c += 2;
          if (!(c <= limit)) throw LIMIT;
          let d = e.digest;
          if (typeof d !== "string") d = str(d);
          if (d instanceof CelError) v = d;
          else {
            c += 1;
            if (!(c <= limit)) throw LIMIT;
            c += 100;
            if (!(c <= limit)) throw LIMIT;
            if (negated) {
              const x = exists(["tool", "verify", false, r, d]);
              c += 1;
              if (!(c <= limit)) throw LIMIT;
              v = !x;
            } else {
              const n = distinct(["tool", "verify", true, r, d]);
              c += 1;
              if (!(c <= limit)) throw LIMIT;
              v = n >= 2n;
            }
          }
        }
        if (v === false) return value(false, c);
        if (v instanceof CelError) err ??= v;
      }
      return result(err ?? true, c);
    } catch (x) {
      if (x === LIMIT) return exceeded(c, limit);
      throw x;
    }
  },
  // event.paths.exists(p, p.startsWith("internal/"))
  "paths-exist": (vars, limit) => {
    let c = 0;
    try {
      const e = object(vars.event);
      if (e instanceof CelError) return result(e, c);
      c += 2;
      if (!(c <= limit)) throw LIMIT;
      let ps = e.paths;
      if (!Array.isArray(ps)) ps = list(ps);
      if (ps instanceof CelError) return result(ps, c);
      const items = ps as readonly unknown[];
      let accu: boolean | CelError = false;
      for (let i = 0; i < items.length; i++) {
        // The loop's check (3), the variable read twice and the test (1 each).
        if (accu === true) {
          c += 3;
          if (!(c <= limit)) throw LIMIT;
          break;
        }
        if (c + 6 <= limit) c += 6;
        else {
          // Near the limit our loop charges the step's parts one by one, so it stops where they do.
          c += 4;
          if (!(c <= limit)) throw LIMIT;
          c += 1;
          if (!(c <= limit)) throw LIMIT;
          c += 1;
          throw LIMIT;
        }
        const p = items[i];
        const t = typeof p === "string" ? p.startsWith("internal/") : new CelError("no such overload");
        if (t === true) accu = true;
        else if (t instanceof CelError && !(accu instanceof CelError)) accu = t;
      }
      c += 1;
      if (!(c <= limit)) throw LIMIT;
      return result(accu, c);
    } catch (x) {
      if (x === LIMIT) return exceeded(c, limit);
      throw x;
    }
  },
};

const WHEN: Record<string, string> = {
  "same-file-collision": 'event.type == "collision_started" && event.scope == "file"',
  "budget-exhaustion-recurring":
    'event.type == "closed" && event.outcome == "budget_exceeded" && count({"type": "closed", "harness": event.harness, "outcome": "budget_exceeded"}, duration("24h")) >= 2',
  "repeated-verify-failure":
    'event.type == "tool" && event.action == "verify" && event.is_error && distinct("run", {"type": "tool", "action": "verify", "is_error": true, "repo": event.repo, "digest": event.digest}, duration("2h")) >= 2 && !exists({"type": "tool", "action": "verify", "is_error": false, "repo": event.repo, "digest": event.digest}, duration("2h"))',
  "paths-exist": 'event.paths.exists(p, p.startsWith("internal/"))',
};

const same = (a: Evaluation, b: Evaluation) =>
  a.kind === b.kind &&
  a.cost === b.cost &&
  (a.kind !== "value" || (b.kind === "value" && a.value === b.value));

const ns = (m: Measurement) => m.medianNs.toFixed(0).padStart(6);
console.log(`node ${process.version}; medians of 31 samples, ns/op`);
console.log(
  `${"expression".padEnd(28)} ${"ours".padStart(6)} ${"model".padStart(6)} ${"floor".padStart(6)} ${"marc".padStart(6)}  model/floor  marc/model  ours/model`,
);
// A first pass warms the JIT for every contender; only the second is printed.
for (const pass of [1, 2]) {
  for (const [name, when] of Object.entries(WHEN)) {
    const compiled = compile(when, ours, { resultType: T.bool });
    if (!compiled.ok) throw new Error(`${name}: ${compiled.errors[0]?.message}`);
    const program = compiled.program;
    const model = MODEL[name] as Generated;
    const floor = FLOOR[name] as Fn;
    const event = eventFor(name);
    const vars = { event, now };
    const expected = program.evaluate(vars, 5000);
    if (!same(expected, model(vars, 5000))) throw new Error(`${name}: the model's answer or cost differs`);
    if (pass === 1)
      for (let limit = 0; limit < expected.cost; limit++)
        if (!same(program.evaluate(vars, limit), model(vars, limit)))
          throw new Error(`${name}: the model stops differently at limit ${limit}`);
    const marcExpr = marc.parse(when);
    const marcVars = { event, now: new Date(Number(now.nanos / 1_000_000n)) };
    const [o, m, f, mc] = measureSideBySide(
      [
        () => program.evaluate(vars, 5000),
        () => model(vars, 5000),
        () => floor(event),
        () => marcExpr(marcVars),
      ],
      { batch: EVAL_BATCH },
    ) as [Measurement, Measurement, Measurement, Measurement];
    if (pass === 1) continue;
    const ratio = (a: Measurement, b: Measurement) => `${(a.medianNs / b.medianNs).toFixed(1)}x`;
    console.log(
      `${name.padEnd(28)} ${ns(o)} ${ns(m)} ${ns(f)} ${ns(mc)}  ${ratio(m, f).padStart(11)} ${ratio(mc, m).padStart(11)} ${ratio(o, m).padStart(11)}`,
    );
  }
}
