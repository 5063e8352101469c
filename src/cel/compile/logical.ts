/** `&&`, `||` and the conditional, with CEL's error-absorbing semantics. */
import { Op } from "../operators.js";
import { isError, type Result } from "../runtime/values.js";
import { noSuchOverload } from "./dispatch.js";
import { type Frame, fitsWhole, type Node } from "./frame.js";
import { LaidOut } from "./layout.js";
import {
  FIELD_UNITS,
  type FieldRead,
  type FieldTest,
  type Operand,
  operand,
  testField,
  testUnits,
} from "./operands.js";

/** Where each operand of a flattened logical chain sat in the tree: an operand's index, or a pair. */
export type Shape = number | readonly [Shape, Shape];

/**
 * `&&` (`stopOn` false) or `||` (`stopOn` true) over a chain of operands, as the nested binary form
 * evaluates it. Operands run left to right until one gives `stopOn`, which decides the whole tree
 * whatever its shape (so the same operands run and the same units are charged). When none does, and
 * every operand gave the other bool, so does the tree; otherwise the values are folded over the
 * tree's shape, pair by pair, as the binary form would have combined them.
 */
export function logical(operands: readonly Operand[], shape: Shape, stopOn: boolean): Node {
  const proceed = !stopOn;
  const op = stopOn ? Op.logicalOr : Op.logicalAnd;
  const fold = (s: Shape, values: readonly Result[]): Result => {
    if (typeof s === "number") return values[s] as Result;
    const l = fold(s[0], values);
    const r = fold(s[1], values);
    if (isError(l)) return l;
    if (isError(r)) return r;
    return typeof l !== "boolean" || typeof r !== "boolean" ? noSuchOverload(op) : proceed;
  };
  const n = operands.length;
  /** The chain from operand `start` on, every operand before it having given `proceed`. */
  const from = (f: Frame, start = 0): Result => {
    // Allocated only once an operand gives something other than `proceed` (an error, a non-bool).
    let values: Result[] | undefined;
    for (let i = start; i < n; i++) {
      const o = operands[i] as Operand;
      // A field test, a rule's commonest first operand (and often its last), taken straight.
      const v = o.kind === "test" ? testField(f, o) : operand(f, o);
      if (v === stopOn) return stopOn;
      if (values !== undefined) values[i] = v;
      else if (v !== proceed) {
        values = new Array<Result>(n).fill(proceed);
        values[i] = v;
      }
    }
    return values === undefined ? proceed : fold(shape, values);
  };
  const general: Node = from;
  const tests = leadingTests(operands);
  const first = tests[0];
  if (first === undefined) return general;
  const { variable, layout } = first;
  const k = tests.length;
  // The chain's leading field tests (and bool field reads) read one laid-out object: its slots are read with one check of
  // the object, and the tests up to the deciding one (or all of them) are one straight-line segment,
  // charged at once when it fits. Anything else (a field of another type, a cost that would cross the
  // limit) runs the general chain from the start: nothing has been charged, and reads are pure.
  // One or two string tests, the commonest leads, each have a closure of their own, written out:
  // measured, the loop below cost a chain of two tests a quarter of its time.
  const [t0, t1] = tests as [FieldTest, FieldTest | undefined];
  if (k === 1 && t0.kind === "test") {
    return (f) => {
      const o = f.vars[variable];
      if (!(o instanceof LaidOut) || o.layout !== layout) return general(f);
      const s0 = o.values[t0.index];
      if (typeof s0 !== "string") return general(f);
      const units = testUnits(t0, s0);
      if (!fitsWhole(f, units)) return general(f);
      f.cost += units;
      if ((t0.negate ? s0 !== t0.text : s0 === t0.text) === stopOn) return stopOn;
      return n === 1 ? proceed : from(f, 1);
    };
  }
  if (k === 2 && t0.kind === "test" && t1?.kind === "test") {
    return (f) => {
      const o = f.vars[variable];
      if (!(o instanceof LaidOut) || o.layout !== layout) return general(f);
      const values = o.values;
      const s0 = values[t0.index];
      if (typeof s0 !== "string") return general(f);
      let units = testUnits(t0, s0);
      if ((t0.negate ? s0 !== t0.text : s0 === t0.text) !== stopOn) {
        const s1 = values[t1.index];
        if (typeof s1 !== "string") return general(f);
        units += testUnits(t1, s1);
        if ((t1.negate ? s1 !== t1.text : s1 === t1.text) !== stopOn) {
          if (!fitsWhole(f, units)) return general(f);
          f.cost += units;
          return n === 2 ? proceed : from(f, 2);
        }
      }
      if (!fitsWhole(f, units)) return general(f);
      f.cost += units;
      return stopOn;
    };
  }
  // A longer run: its first test written out, the rest in a loop.
  return (f) => {
    const o = f.vars[variable];
    if (!(o instanceof LaidOut) || o.layout !== layout) return general(f);
    const values = o.values;
    let units = 0;
    let decided = false;
    if (t0.kind === "test") {
      const s0 = values[t0.index];
      if (typeof s0 !== "string") return general(f);
      units = testUnits(t0, s0);
      decided = (t0.negate ? s0 !== t0.text : s0 === t0.text) === stopOn;
    }
    for (let i = t0.kind === "test" ? 1 : 0; i < k && !decided; i++) {
      const t = tests[i] as FieldTest | FieldRead;
      const s = values[t.index];
      if (t.kind === "field") {
        // A bool field as an operand (`event.is_error`): its read alone.
        if (typeof s !== "boolean") return general(f);
        units += FIELD_UNITS;
        decided = s === stopOn;
      } else {
        if (typeof s !== "string") return general(f);
        units += testUnits(t, s);
        decided = (t.negate ? s !== t.text : s === t.text) === stopOn;
      }
    }
    if (!fitsWhole(f, units)) return general(f);
    f.cost += units;
    return decided ? stopOn : k === n ? proceed : from(f, k);
  };
}

/**
 * The chain's leading field tests of whole cost and bool field reads, on one variable's laid-out slots.
 */
function leadingTests(operands: readonly Operand[]): (FieldTest | FieldRead)[] {
  const tests: (FieldTest | FieldRead)[] = [];
  for (const o of operands) {
    const fits = (o.kind === "test" && o.segment) || (o.kind === "field" && o.verbatim === "boolean");
    if (!fits || o.layout === undefined || o.index < 0) break;
    const first = tests[0];
    if (first !== undefined && (first.variable !== o.variable || first.layout !== o.layout)) break;
    tests.push(o);
  }
  return tests;
}

export function conditional(test: Node, then: Node, otherwise: Node): Node {
  return (f) => {
    const c = test(f);
    if (c === true) return then(f);
    if (c === false) return otherwise(f);
    return isError(c) ? c : noSuchOverload(Op.conditional);
  };
}
