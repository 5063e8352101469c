/**
 * Specialisations: faster closures for particular calls, each matched against a planned call
 * (`PlainCall`) and doing exactly what the plain closure would, value for value and charge for charge.
 * The compiler tries them in order and takes the first that matches; a call none matches runs the
 * plain closure. The shape is cel-go's `interpreter/decorators.go`: the planner stays plain, and each
 * rewrite is read on its own.
 */
import { stringEqualityUnits, traversalUnits } from "../cost/calls.js";
import { COST, scaled } from "../cost/constants.js";
import { Op } from "../operators.js";
import { isError, TypeValue } from "../runtime/values.js";
import { codePointLength } from "../source.js";
import { compileRegex } from "../std/regex.js";
import type { Type } from "../types.js";
import type { Built } from "./built.js";
import { callUnits, type PlainCall, STANDARD_OVERLOADS } from "./calls.js";
import { noSuchOverload } from "./dispatch.js";
import { charge, type Node } from "./frame.js";
import { AFFIX_TESTS, affixUnits } from "./loops.js";
import {
  constantText,
  equalsConstant,
  fieldEquality,
  type Operand,
  operand,
  readSlot,
  testField,
} from "./operands.js";

/** What a specialisation may do besides building: report a compile error at an argument. */
export interface SpecialiseContext {
  error(at: PlainCall["args"][number], message: string): void;
}

export type Specialisation = (call: PlainCall, ctx: SpecialiseContext) => Built | undefined;

/** `type(event)` of a declared object: its type is known here; only the argument's error is left to run. */
const objectTypeOf: Specialisation = (call) => {
  if (!call.standard || call.fn !== "type" || call.inputs.length !== 1) return undefined;
  const t = call.argTypes[0] as Type;
  if (t.kind !== "object") return undefined;
  const value = new TypeValue(t.name);
  const a = (call.inputs[0] as Built).node;
  return {
    node: (f) => {
      const v = a(f);
      return isError(v) ? v : value;
    },
  };
};

/** `s.matches("…")` with a literal pattern: compiled once, and a bad pattern is a compile error. */
const literalRegex: Specialisation = (call, ctx) => {
  if (!call.standard || call.fn !== "matches" || call.inputs.length !== 2) return undefined;
  const pattern = call.args[1];
  if (pattern?.kind !== "literal" || pattern.value.type !== "string") return undefined;
  const re = compileRegex(pattern.value.value);
  if (isError(re)) {
    ctx.error(pattern, re.message);
    return { node: () => re };
  }
  const input = (call.inputs[0] as Built).node;
  const fn = call.fn;
  const patternUnits = scaled(codePointLength(pattern.value.value), COST.regexLengthFactor);
  return {
    node: (f) => {
      const s = input(f);
      if (isError(s)) return s;
      if (typeof s !== "string") return noSuchOverload(fn);
      charge(f, scaled(1 + codePointLength(s), COST.stringTraversalFactor) * patternUnits);
      return re.test(s);
    },
  };
};

const isEquality = (call: PlainCall) =>
  (call.fn === Op.equals || call.fn === Op.notEquals) && call.operands.length === 2;

/** `event.type == "closed"`: a string field against a constant, one operand that a chain runs in place. */
const stringFieldEquality: Specialisation = (call) => {
  if (!isEquality(call)) return undefined;
  const test = fieldEquality(call.argTypes, call.operands, call.fn === Op.notEquals);
  if (test === undefined) return undefined;
  return { node: (f) => testField(f, test), inPlace: test };
};

const IDENTITY_EQUALITY = new Set(["string", "bool", "int", "double"]);

/**
 * `==` and `!=` between two values of one primitive type whose CEL equality is JS identity (strings,
 * bools, bigints, doubles with NaN unequal to itself): the most common test in a rule. The charge is
 * the shared equality rule's.
 */
const primitiveEquality: Specialisation = (call) => {
  if (!isEquality(call)) return undefined;
  const [ta, tb] = call.argTypes;
  if (ta === undefined || tb === undefined || ta.kind !== tb.kind || !IDENTITY_EQUALITY.has(ta.kind))
    return undefined;
  const negate = call.fn === Op.notEquals;
  const [a, b] = call.operands as [Operand, Operand];
  if (ta.kind === "string" && b.kind === "constant" && typeof b.value === "string") {
    // `p == "internal/"`: the constant's code points are counted here, once.
    const c = constantText(b.value, b.cost, negate);
    return {
      node: (f) => {
        const x = operand(f, a);
        return isError(x) ? x : equalsConstant(f, x as string, c);
      },
    };
  }
  const units = ta.kind === "string" ? stringEqualityUnits : undefined;
  return {
    node: (f) => {
      const x = operand(f, a);
      if (isError(x)) return x;
      const y = operand(f, b);
      if (isError(y)) return y;
      charge(f, units === undefined ? COST.call : units(x as string, y as string));
      return negate ? x !== y : x === y;
    },
  };
};

/**
 * `p.startsWith("internal/")`, `p.endsWith(…)`, `p.contains(…)` with a constant argument: the
 * argument's share of the shared cost rule is worked out once. A prefix or suffix test of a loop
 * variable is also a loop test, which a quantifier runs in its own loop.
 */
const constantStringTest: Specialisation = (call) => {
  const text = call.inputs[1]?.known;
  if (!call.standard || !call.decided || call.inputs.length !== 2 || typeof text?.value !== "string")
    return undefined;
  const o = call.overloads[0];
  const impl = o?.impl;
  if (o === undefined || impl === undefined) return undefined;
  const value = text.value;
  const input = call.operands[0] as Operand;
  const method = AFFIX_TESTS.get(o.id);
  if (method !== undefined) {
    const units = affixUnits(value, text.cost);
    if (input.kind === "slot") {
      // `p.startsWith("internal/")` in a comprehension: the loop's hottest node, read in one closure.
      const slot = input.slot;
      return {
        node: (f) => {
          const x = readSlot(f, slot);
          if (isError(x)) return x;
          charge(f, units);
          return impl(x, value);
        },
        loopTest: { slot, method, text: value, units },
      };
    }
    return {
      node: (f) => {
        const x = operand(f, input);
        if (isError(x)) return x;
        charge(f, units);
        return impl(x, value);
      },
    };
  }
  if (o.id === "contains_string") {
    const textUnits = traversalUnits(value);
    const textCost = text.cost;
    return {
      node: (f) => {
        const x = operand(f, input);
        if (isError(x)) return x;
        charge(f, textCost + traversalUnits(x as string) * textUnits);
        return impl(x, value);
      },
    };
  }
  return undefined;
};

/** The standard `!` of one bool, decided at compile time. */
function isLogicalNot(call: PlainCall): boolean {
  const o = call.overloads[0];
  return (
    o !== undefined &&
    call.decided &&
    call.inputs.length === 1 &&
    o.id === "logical_not" &&
    STANDARD_OVERLOADS.has(o)
  );
}

/** `!x`, the commonest unary call of a rule, without a call of its implementation; `!` of a loop test is one too. */
const logicalNot: Specialisation = (call) => {
  if (!isLogicalNot(call)) return undefined;
  const units = callUnits(call.overloads[0] as NonNullable<PlainCall["overloads"][number]>, call.extra);
  if (typeof units !== "number") return undefined;
  const a = call.operands[0] as Operand;
  const inner = call.inputs[0]?.loopTest;
  const node: Node = (f) => {
    const x = operand(f, a);
    if (isError(x)) return x;
    charge(f, units);
    return !x;
  };
  return inner === undefined || inner.negation !== undefined
    ? { node }
    : { node, loopTest: { ...inner, negation: units } };
};

/** The standard ordering of two ints, by overload id, as the JS operators on bigints compute it. */
const INT_ORDERINGS: ReadonlyMap<string, (a: bigint, b: bigint) => boolean> = new Map([
  ["less_int64", (a: bigint, b: bigint) => a < b],
  ["less_equals_int64", (a: bigint, b: bigint) => a <= b],
  ["greater_int64", (a: bigint, b: bigint) => a > b],
  ["greater_equals_int64", (a: bigint, b: bigint) => a >= b],
]);

/** `count(…) >= 2`: two bigints are ordered by the JS operator, as the library orders ints. */
const intOrdering: Specialisation = (call) => {
  const o = call.overloads[0];
  if (o === undefined || !call.decided || call.inputs.length !== 2 || !STANDARD_OVERLOADS.has(o))
    return undefined;
  const order = INT_ORDERINGS.get(o.id);
  const units = callUnits(o, call.extra);
  const impl = o.impl;
  if (order === undefined || typeof units !== "number" || impl === undefined) return undefined;
  const [a, b] = call.operands as [Operand, Operand];
  if (a.kind === "node" && b.kind === "constant" && b.cost === 0 && typeof b.value === "bigint") {
    // `count(…) >= 2`: a computed int against a free constant, the constant read as it is.
    const left = a.node;
    const y = b.value;
    return {
      node: (f) => {
        const x = left(f);
        if (isError(x)) return x;
        charge(f, units);
        return typeof x === "bigint" ? order(x, y) : impl(x, y);
      },
    };
  }
  return {
    node: (f) => {
      const x = operand(f, a);
      if (isError(x)) return x;
      const y = operand(f, b);
      if (isError(y)) return y;
      charge(f, units);
      return typeof x === "bigint" && typeof y === "bigint" ? order(x, y) : impl(x, y);
    },
  };
};

/** In order: the first that matches a call builds it. */
export const SPECIALISATIONS: readonly Specialisation[] = [
  objectTypeOf,
  literalRegex,
  stringFieldEquality,
  primitiveEquality,
  constantStringTest,
  logicalNot,
  intOrdering,
];
