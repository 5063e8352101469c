/**
 * A built node: the closure the compiler made for an expression, with what later steps may match on
 * instead of recovering it from the closure: its value when known at compile time, the operand that
 * does its work in place, and the loop test it is.
 */
import type { Node } from "./frame.js";
import type { LoopTest } from "./loops.js";
import { type Known, type Operand, shaped } from "./operands.js";

export interface Built {
  readonly node: Node;
  /** The value, when known at compile time, with what evaluating the node charges. */
  readonly known?: Known;
  /** What an operand does in place of calling `node`, when that is cheaper (a field read, a slot). */
  readonly inPlace?: Operand;
  /** A test of a comprehension variable against a constant, which a quantifier can run in its loop. */
  readonly loopTest?: LoopTest;
}

/** How a specialised closure takes `b` as an argument. */
export function operandOf(b: Built): Operand {
  const known = b.known;
  if (known !== undefined) return shaped({ kind: "constant", value: known.value, cost: known.cost });
  return shaped(b.inPlace ?? { kind: "node", node: b.node });
}

export const operandsOf = (bs: readonly Built[]): Operand[] => bs.map(operandOf);
