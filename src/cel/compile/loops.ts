/**
 * The quantifier macros `all` and `exists` run as loops over their range, and a predicate that tests
 * the loop variable against a constant prefix or suffix run inside the loop.
 */
import { traversalUnits } from "../cost/calls.js";
import { COST } from "../cost/constants.js";
import { Op } from "../operators.js";
import { CelError, CelMap, isError, type Result, type Value } from "../runtime/values.js";
import { noSuchOverload } from "./dispatch.js";
import { charge, fitsWhole, type Node } from "./frame.js";
import { readsStringList } from "./host.js";
import { LaidOut } from "./layout.js";
import { FIELD_UNITS, type Operand, operand } from "./operands.js";

/** What a comprehension iterates: a list's elements or a map's keys; an error passes through. */
export function rangeItems(r: Result): readonly Value[] | CelError {
  if (isError(r)) return r;
  if (Array.isArray(r)) return r as readonly Value[];
  if (r instanceof CelMap) return [...r.keys()];
  return new CelError(`cannot iterate over ${r === null ? "null" : typeof r}`);
}

/**
 * The accumulator after one step, `@result || p` for exists (`stopOn` true), `@result && p` for all:
 * the deciding value sticks, the first error is kept otherwise, a non-bool is no overload.
 */
function quantifierStep(accu: Result, p: Result, stopOn: boolean): Result {
  if (p === stopOn) return stopOn;
  if (isError(accu)) return accu;
  if (isError(p)) return p;
  return typeof p === "boolean" ? !stopOn : noSuchOverload(stopOn ? Op.logicalOr : Op.logicalAnd);
}

/** The loop condition's units: `@not_strictly_false(@result)`, and for exists `…(!@result)`. */
const ALL_CHECK = COST.selectAndIdent + COST.call;
const EXISTS_CHECK = ALL_CHECK + COST.call;

/**
 * `all` and `exists` as a direct loop over the predicate: what the general comprehension would do for
 * their expansion, step for step and unit for unit (the condition `@not_strictly_false(…)` and the
 * step `@result && p` or `@result || p`), without evaluating the expansion's scaffolding as closures.
 */
export function quantifierLoop(range: Operand, predicate: Node, iter: number, exists: boolean): Node {
  // `all` continues while the accumulator is not false (ident + call = 2 units); `exists` while it is
  // not true, through `!_` (3 units, or 2 when the accumulator is an error, which `!_` passes on free).
  const stopOn = exists;
  return (f) => {
    const items = rangeItems(operand(f, range));
    if (isError(items)) return items;
    const slots = f.slots;
    let accu: Result = !stopOn;
    for (let i = 0; i < items.length; i++) {
      const check = exists && !isError(accu) ? EXISTS_CHECK : ALL_CHECK;
      if (accu === stopOn) {
        charge(f, check);
        break;
      }
      charge(f, check + COST.selectAndIdent);
      slots[iter] = items[i] as Value;
      const p = predicate(f);
      accu = quantifierStep(accu, p, stopOn);
    }
    charge(f, COST.selectAndIdent);
    return accu;
  };
}

/**
 * A predicate of a quantifier that tests its loop variable against a constant, `p.startsWith("a/")`
 * or `!p.endsWith("_test.go")`, run by `quantifiedTest` without calling a closure per element.
 */
export interface LoopTest {
  readonly slot: number;
  readonly method: "startsWith" | "endsWith";
  readonly text: string;
  /** What the test charges, beyond reading the loop variable. */
  readonly units: number;
  /** What a `!` around the test charges, when there is one. */
  readonly negation?: number;
}

/** The standard library's prefix and suffix tests, by overload id, as the string methods they call. */
export const AFFIX_TESTS: ReadonlyMap<string, "startsWith" | "endsWith"> = new Map([
  ["starts_with_string", "startsWith"],
  ["ends_with_string", "endsWith"],
]);

/** What `s.startsWith(text)` or `s.endsWith(text)` charges: the text's traversal, plus computing it. */
export function affixUnits(text: string, textCost: number): number {
  return textCost + traversalUnits(text);
}

/**
 * `quantifierLoop` with its predicate a `LoopTest`, done in the loop: the same steps and charges in
 * the same order (the loop's, the variable's, the test's, the negation's), the same results. Its range
 * and step are written out rather than calling `rangeItems` and `quantifierStep`: measured, the calls
 * cost this loop about a third (paths-exist alone, 145 → 185 ns).
 */
export function quantifiedTest(range: Operand, test: LoopTest, exists: boolean): Node {
  const stopOn = exists;
  const op = exists ? Op.logicalOr : Op.logicalAnd;
  const { method, text, units, negation } = test;
  const starts = method === "startsWith";
  // What a step charges after the loop's check: the loop variable, its read, the test and the `!`.
  const tail = 2 * COST.selectAndIdent + units + (negation ?? 0);
  const whole = Number.isInteger(tail);
  const general: Node = (f) => {
    const r = operand(f, range);
    if (isError(r)) return r;
    let items: readonly Value[];
    if (Array.isArray(r)) items = r as readonly Value[];
    else if (r instanceof CelMap) items = [...r.keys()];
    else return new CelError(`cannot iterate over ${r === null ? "null" : typeof r}`);
    let accu: Result = !stopOn;
    for (let i = 0; i < items.length; i++) {
      const check = exists && !isError(accu) ? EXISTS_CHECK : ALL_CHECK;
      if (accu === stopOn) {
        charge(f, check);
        break;
      }
      const x = items[i] as Value;
      let p: Result = x;
      if (whole && !isError(x) && fitsWhole(f, check + tail)) {
        // The step's parts at once: no part can cross the limit, and the sum is exact.
        f.cost += check + tail;
        p = starts ? (x as string).startsWith(text) : (x as string).endsWith(text);
        if (negation !== undefined) p = !p;
      } else {
        charge(f, check + COST.selectAndIdent);
        charge(f, COST.selectAndIdent);
        if (!isError(x)) {
          charge(f, units);
          p = starts ? (x as string).startsWith(text) : (x as string).endsWith(text);
          if (negation !== undefined) {
            charge(f, negation);
            p = !p;
          }
        }
      }
      if (p === stopOn) accu = stopOn;
      else if (!isError(accu)) accu = isError(p) ? p : typeof p === "boolean" ? !stopOn : noSuchOverload(op);
    }
    charge(f, COST.selectAndIdent);
    return accu;
  };
  if (range.kind !== "field" || range.layout === undefined || range.index < 0 || !whole) return general;
  if (!readsStringList(range.read)) return general;
  // Over a list-of-strings field of a laid-out object, the whole evaluation is one straight-line
  // segment: the read, each step up to the deciding one, the check that stops the loop after it, and
  // the result. The elements are tested first (every one must be a string, as the read checks), the
  // sum charged at once when it fits; anything else runs the general loop, nothing having been charged.
  const { variable, layout, index } = range;
  const check = exists ? EXISTS_CHECK : ALL_CHECK;
  const step = check + tail;
  const negated = negation !== undefined;
  const tl = text.length;
  // The text's code units, which an element must have from its start (a prefix) or up to its end.
  const codes: number[] = [];
  for (let j = 0; j < tl; j++) codes.push(text.charCodeAt(j));
  return (f) => {
    const o = f.vars[variable];
    if (!(o instanceof LaidOut) || o.layout !== layout) return general(f);
    const items = o.values[index];
    if (!Array.isArray(items)) return general(f);
    const n = items.length;
    let decided = -1;
    for (let i = 0; i < n; i++) {
      const x: unknown = items[i];
      if (typeof x !== "string") return general(f);
      if (decided >= 0) continue;
      // Code unit by code unit, as the string methods compare: for a text the engine cannot see as
      // a constant it runs those as calls, which measured slower (paths-all 0.77x of them).
      const from = starts ? 0 : x.length - tl;
      let hit = from >= 0;
      for (let j = 0; hit && j < tl; j++) hit = x.charCodeAt(from + j) === (codes[j] as number);
      if ((hit !== negated) === stopOn) decided = i;
    }
    const steps = decided < 0 ? n : decided + 1;
    const units =
      FIELD_UNITS + steps * step + (decided >= 0 && decided + 1 < n ? check : 0) + COST.selectAndIdent;
    if (!fitsWhole(f, units)) return general(f);
    f.cost += units;
    return decided < 0 ? !stopOn : stopOn;
  };
}
