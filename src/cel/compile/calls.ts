/**
 * The plain closure of a call: overloads resolved at compile time when the argument types decide them
 * (a direct call of the implementation, by arity), else chosen per call. Faster shapes for particular
 * calls are specialisations (`specialisations.ts`), matched against the call before this is used.
 */
import type { Expr } from "../ast.js";
import { CALL_COSTS } from "../cost/calls.js";
import { COST } from "../cost/constants.js";
import type { CallSite, OverloadDecl, PreparedCall } from "../env.js";
import { isError, type Value } from "../runtime/values.js";
import { standardFunctions } from "../std/index.js";
import type { Type } from "../types.js";
import type { Built } from "./built.js";
import { noSuchOverload, selectOverload } from "./dispatch.js";
import { charge, type Node } from "./frame.js";
import { type Operand, operand } from "./operands.js";

/** What one call of an overload charges: fixed, or computed from its arguments by the shared rule. */
export type Units = number | ((args: readonly Value[]) => number);

export function callUnits(o: OverloadDecl, extra: number): Units {
  if (o.cost !== undefined) return o.cost.fixed + extra;
  const rule = CALL_COSTS[o.id];
  if (rule === undefined) return COST.call + extra;
  return extra === 0 ? rule.runtime : (args) => rule.runtime(args) + extra;
}

export const STANDARD_OVERLOADS: ReadonlySet<OverloadDecl> = new Set(
  standardFunctions.flatMap((f) => f.overloads),
);

/** The contextual overloads of a call, each prepared for a site whose arguments are all plain values. */
type Prepared = ReadonlyMap<OverloadDecl, PreparedCall>;
const NONE_PREPARED: Prepared = new Map();

/** Under dyn a contextual candidate is chosen per call, so each is prepared for a site with no records. */
function preparedForDyn(overloads: readonly OverloadDecl[], inputs: readonly Built[]): Prepared {
  if (!overloads.some((o) => o.prepare !== undefined)) return NONE_PREPARED;
  const unknownSite: CallSite = {
    constants: inputs.map((b) => b.known?.value),
    recordKeys: inputs.map(() => undefined),
  };
  return new Map(
    overloads.flatMap((o) => (o.prepare === undefined ? [] : [[o, o.prepare(unknownSite)] as const])),
  );
}

/**
 * A call as the compiler plans it before any specialisation: its overloads, whether the argument
 * types decide one at compile time, and its built arguments (the target first, for a method).
 */
export interface PlainCall {
  readonly fn: string;
  readonly args: readonly Expr[];
  readonly argTypes: readonly Type[];
  readonly overloads: readonly OverloadDecl[];
  /** Exactly one overload, and no argument typed dyn or by a type parameter. */
  readonly decided: boolean;
  /** Every overload is the standard library's, which is known to be pure. */
  readonly standard: boolean;
  readonly inputs: readonly Built[];
  readonly operands: readonly Operand[];
  /** The unit an index of a computed value costs beyond one of an attribute. */
  readonly extra: number;
}

/** The closure of a call with no specialisation: the implementation called directly when decided. */
export function plainCall(call: PlainCall): Node {
  const { fn, overloads, decided, extra } = call;
  const only = overloads[0];
  if (only === undefined) return () => noSuchOverload(fn);
  const impl = only.impl;
  const units = callUnits(only, extra);
  if (impl === undefined || !decided) return dispatchingCall(call, units);
  // A constant charge is read as is; a size-dependent one is computed from the argument values.
  const fixed = typeof units === "number" ? units : undefined;
  const sized = typeof units === "function" ? units : undefined;
  switch (call.operands.length) {
    case 1: {
      const [a] = call.operands as [Operand];
      return (f) => {
        const x = operand(f, a);
        if (isError(x)) return x;
        charge(f, fixed ?? (sized as (v: readonly Value[]) => number)([x]));
        return impl(x);
      };
    }
    case 2: {
      const [a, b] = call.operands as [Operand, Operand];
      return (f) => {
        const x = operand(f, a);
        if (isError(x)) return x;
        const y = operand(f, b);
        if (isError(y)) return y;
        charge(f, fixed ?? (sized as (v: readonly Value[]) => number)([x, y]));
        return impl(x, y);
      };
    }
  }
  return dispatchingCall(call, units);
}

/** The general call: any arity, overloads chosen per call under dyn, contextual functions given the activation. */
function dispatchingCall(call: PlainCall, units: Units): Node {
  const { fn, overloads, decided, extra } = call;
  const args = call.inputs.map((b) => b.node);
  const prepared = preparedForDyn(overloads, call.inputs);
  const only = overloads[0] as OverloadDecl;
  return (f) => {
    const values: Value[] = new Array(args.length);
    for (let i = 0; i < args.length; i++) {
      const v = (args[i] as Node)(f);
      if (isError(v)) return v;
      values[i] = v;
    }
    const o = decided ? only : selectOverload(overloads, values);
    if (o === undefined) return noSuchOverload(fn);
    const u = o === only ? units : callUnits(o, extra);
    charge(f, typeof u === "number" ? u : u(values));
    return o.impl !== undefined ? o.impl(...values) : (prepared.get(o) as PreparedCall)(f.vars, values);
  };
}
