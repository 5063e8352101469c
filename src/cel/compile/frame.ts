/** The state one evaluation runs in: variable values, comprehension slots and the cost meter. */
import type { Result, Value } from "../runtime/values.js";

/** Variable values by name. Objects may be plain JS objects (an event as the journal gives it). */
export type Activation = Readonly<Record<string, unknown>>;

export interface Frame {
  readonly vars: Activation;
  /** Comprehension variables, one slot each, assigned at compile time. */
  readonly slots: Value[];
  /** Units charged so far, and the most this evaluation may charge. */
  cost: number;
  readonly limit: number;
}

export type Node = (f: Frame) => Result;

/** The one exception an evaluation throws: its cost limit was reached. Caught at the program boundary. */
export class CostLimitExceeded extends Error {
  override name = "CostLimitExceeded";
  constructor(
    readonly limit: number,
    readonly cost: number,
  ) {
    super(`operation cancelled: actual cost limit exceeded (limit ${limit}, reached ${cost})`);
  }
}

/** Charges `units`; written `!(cost <= limit)` so that a NaN can never pass. */
export function charge(f: Frame, units: number): void {
  f.cost += units;
  if (!(f.cost <= f.limit)) throw new CostLimitExceeded(f.limit, f.cost);
}

/**
 * Whether `units`, the sum of whole-number parts the meter would charge one by one, can be charged at
 * once: the total fits under the limit, so no part would have stopped the evaluation, and the cost so
 * far is a whole number that stays below 2^53, so the parts one by one would add up to exactly the same.
 */
export function fitsWhole(f: Frame, units: number): boolean {
  const after = f.cost + units;
  return Number.isInteger(f.cost) && after <= f.limit && after <= Number.MAX_SAFE_INTEGER;
}
