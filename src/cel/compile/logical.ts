/** `&&`, `||` and the conditional, with CEL's error-absorbing semantics. */
import { Op } from "../operators.js";
import { isError, type Result } from "../runtime/values.js";
import { noSuchOverload } from "./dispatch.js";
import type { Node } from "./frame.js";
import { type Operand, operand, testField } from "./operands.js";

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
  return (f) => {
    // Allocated only once an operand gives something other than `proceed` (an error, a non-bool).
    let values: Result[] | undefined;
    for (let i = 0; i < n; i++) {
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
}

export function conditional(test: Node, then: Node, otherwise: Node): Node {
  return (f) => {
    const c = test(f);
    if (c === true) return then(f);
    if (c === false) return otherwise(f);
    return isError(c) ? c : noSuchOverload(Op.conditional);
  };
}
