/**
 * `estimateCost`: a static `{min, max}` bound on what evaluating a checked expression can charge, for
 * inputs within the sizes the environment declares. It charges exactly what the compiled closures
 * charge (the same constants, the same per-call rules in `calls.ts`), so `actual <= max` holds for
 * every such input, and a rule whose `max` fits the limit cannot overrun it. `min` bounds evaluations
 * that raise no error: an error stops evaluation early, below it.
 */
import { assertNever, type CallExpr, type ComprehensionExpr, type Expr } from "../ast.js";
import type { CheckedAst } from "../check/checker.js";
import { isAttribute } from "../compile/compiler.js";
import type { Env, SizeBound } from "../env.js";
import { Op } from "../operators.js";
import { codePointLength } from "../source.js";
import type { Type } from "../types.js";
import { CALL_COSTS } from "./calls.js";
import { COST } from "./constants.js";
import {
  fixed,
  type Range,
  range,
  saturatingAdd,
  saturatingMultiply,
  sum,
  UNKNOWN,
  union,
  ZERO,
} from "./range.js";

/** What the estimator knows of a value: its size, and the sizes of its elements (or map values). */
interface Shape {
  readonly size: Range;
  readonly elem?: Shape;
  /** For a map: the sizes of its keys. */
  readonly key?: Shape;
}

interface Estimate {
  readonly cost: Range;
  readonly shape: Shape;
}

const SCALAR: Shape = { size: fixed(1n) };
const UNKNOWN_SHAPE: Shape = { size: UNKNOWN };

function scalarType(t: Type | undefined): boolean {
  switch (t?.kind) {
    case "int":
    case "uint":
    case "double":
    case "bool":
    case "timestamp":
    case "duration":
    case "null_type":
      return true;
    default:
      return false;
  }
}

/** A shape with the parts that are known: spelled out, since V8 builds `{ ...(x ? { x } : {}) }` slowly. */
function shapeOf(size: Range, elem: Shape | undefined, key?: Shape): Shape {
  if (elem === undefined) return key === undefined ? { size } : { size, key };
  return key === undefined ? { size, elem } : { size, elem, key };
}

function boundShape(bound: SizeBound | undefined, type: Type | undefined): Shape {
  if (scalarType(type)) return SCALAR;
  if (bound === undefined) return UNKNOWN_SHAPE;
  const elemType = type?.kind === "list" ? type.elem : type?.kind === "map" ? type.value : undefined;
  const keyType = type?.kind === "map" ? type.key : undefined;
  const size = range(0n, BigInt(bound.max));
  const elem = boundShape(bound.elem, elemType);
  return keyType !== undefined ? { size, elem, key: boundShape(undefined, keyType) } : { size, elem };
}

function unionShape(a: Shape, b: Shape): Shape {
  const elem = a.elem && b.elem ? unionShape(a.elem, b.elem) : undefined;
  const key = a.key && b.key ? unionShape(a.key, b.key) : undefined;
  return shapeOf(union(a.size, b.size), elem, key);
}

function unionAll(shapes: readonly Shape[]): Shape | undefined {
  return shapes.length === 0 ? undefined : shapes.reduce(unionShape);
}

export function estimateCost(checked: CheckedAst, env: Env): Range {
  return new Estimator(checked, env).expr(checked.expr).cost;
}

class Estimator {
  /** Comprehension variables in scope, innermost last. */
  private readonly scopes: Map<string, Shape>[] = [];

  constructor(
    private readonly checked: CheckedAst,
    private readonly env: Env,
  ) {}

  private typeOf(e: Expr): Type | undefined {
    return this.checked.types.get(e.id);
  }

  expr(e: Expr): Estimate {
    switch (e.kind) {
      case "literal": {
        const v = e.value;
        const size =
          v.type === "string"
            ? fixed(codePointLength(v.value))
            : v.type === "bytes"
              ? fixed(v.value.length)
              : fixed(1n);
        return { cost: fixed(COST.constant), shape: { size } };
      }
      case "ident":
        return this.ident(e.name, e);
      case "select":
        return this.select(e);
      case "call":
        return this.call(e);
      case "list": {
        const items = e.elements.map((x) => this.expr(x));
        const elem = unionAll(items.map((i) => i.shape));
        return {
          cost: saturatingAdd(fixed(COST.listCreateBase), sum(items.map((i) => i.cost))),
          shape: shapeOf(fixed(items.length), elem),
        };
      }
      case "map": {
        const keys = e.entries.map((en) => this.expr(en.key));
        const values = e.entries.map((en) => this.expr(en.value));
        const elem = unionAll(values.map((v) => v.shape));
        const key = unionAll(keys.map((k) => k.shape));
        return {
          cost: saturatingAdd(fixed(COST.mapCreateBase), sum([...keys, ...values].map((x) => x.cost))),
          shape: shapeOf(fixed(e.entries.length), elem, key),
        };
      }
      case "struct":
        return {
          cost: saturatingAdd(
            fixed(COST.structCreateBase),
            sum(e.fields.map((f) => this.expr(f.value).cost)),
          ),
          shape: UNKNOWN_SHAPE,
        };
      case "comprehension":
        return this.comprehension(e);
      default:
        return assertNever(e);
    }
  }

  private local(name: string): Shape | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]?.get(name);
      if (s !== undefined) return s;
    }
    return undefined;
  }

  private ident(name: string, e: Expr, qualified = false): Estimate {
    const local = qualified ? undefined : this.local(name);
    if (local !== undefined) return { cost: fixed(COST.selectAndIdent), shape: local };
    const ref = this.checked.refs.get(e.id);
    if (ref?.kind === "type") return { cost: ZERO, shape: SCALAR };
    const varName = ref?.kind === "variable" ? ref.name : name;
    const decl = this.env.variable(varName);
    return { cost: fixed(COST.selectAndIdent), shape: boundShape(decl?.size, decl?.type ?? this.typeOf(e)) };
  }

  private select(e: Extract<Expr, { kind: "select" }>): Estimate {
    const ref = this.checked.refs.get(e.id);
    if (ref !== undefined && !e.testOnly) return this.ident(e.field, e, true);
    const operand = this.expr(e.operand);
    if (e.testOnly) return { cost: saturatingAdd(operand.cost, fixed(COST.presenceTest)), shape: SCALAR };
    const units = COST.selectAndIdent + (isAttribute(e.operand) ? 0 : 1);
    const operandType = this.typeOf(e.operand);
    const fieldType = this.typeOf(e);
    let shape: Shape;
    if (operandType?.kind === "object") {
      shape = boundShape(this.env.objectType(operandType.name)?.fields[e.field]?.size, fieldType);
    } else {
      shape = scalarType(fieldType) ? SCALAR : (operand.shape.elem ?? UNKNOWN_SHAPE);
    }
    return { cost: saturatingAdd(operand.cost, fixed(units)), shape };
  }

  private call(e: CallExpr): Estimate {
    const argExprs = e.target === undefined ? e.args : [e.target, ...e.args];
    const args = argExprs.map((a) => this.expr(a));
    const a = args[0];
    const b = args[1];
    const c = args[2];
    switch (e.fn) {
      case Op.logicalAnd:
      case Op.logicalOr:
        // The right side runs only when the left does not decide.
        return {
          cost: range(
            (a as Estimate).cost.min,
            saturatingAdd((a as Estimate).cost, (b as Estimate).cost).max,
          ),
          shape: SCALAR,
        };
      case Op.conditional:
        return {
          cost: saturatingAdd((a as Estimate).cost, union((b as Estimate).cost, (c as Estimate).cost)),
          shape: unionShape((b as Estimate).shape, (c as Estimate).shape),
        };
    }
    const argCost = sum(args.map((x) => x.cost));
    const resultType = this.typeOf(e);
    if (e.fn === Op.index && args.length === 2) {
      const units = COST.call + (isAttribute(argExprs[0] as Expr) ? 0 : 1);
      const shape = scalarType(resultType) ? SCALAR : ((a as Estimate).shape.elem ?? UNKNOWN_SHAPE);
      return { cost: saturatingAdd(argCost, fixed(units)), shape };
    }
    if (e.fn === "dyn" && args.length === 1) {
      return { cost: saturatingAdd(argCost, fixed(COST.call)), shape: (a as Estimate).shape };
    }
    const ref = this.checked.refs.get(e.id);
    const overloads = ref?.kind === "function" ? ref.overloads : [];
    let own: Range | undefined;
    let resultSize: Range | undefined;
    const sizes = args.map((x) => x.shape.size);
    for (const o of overloads) {
      const rule = o.cost === undefined ? CALL_COSTS[o.id] : undefined;
      const est = rule?.estimate(sizes);
      const cost = o.cost !== undefined ? fixed(o.cost.fixed) : (est?.cost ?? fixed(COST.call));
      own = own === undefined ? cost : union(own, cost);
      if (est?.resultSize !== undefined)
        resultSize = resultSize === undefined ? est.resultSize : union(resultSize, est.resultSize);
    }
    const elem =
      e.fn === Op.add
        ? unionAll(args.map((x) => x.shape.elem).filter((s): s is Shape => s !== undefined))
        : undefined;
    const shape: Shape = scalarType(resultType)
      ? SCALAR
      : shapeOf(resultSize ?? UNKNOWN, elem && args.every((x) => x.shape.elem) ? elem : undefined);
    return { cost: saturatingAdd(argCost, own ?? fixed(COST.call)), shape };
  }

  private comprehension(e: ComprehensionExpr): Estimate {
    const source = this.expr(e.iterRange);
    const init = this.expr(e.accuInit);
    const rangeType = this.typeOf(e.iterRange);
    // Under dyn the range may be a map, whose keys nothing bounds: only a known type says which part.
    const iterShape =
      (rangeType?.kind === "map"
        ? source.shape.key
        : rangeType?.kind === "list"
          ? source.shape.elem
          : undefined) ?? UNKNOWN_SHAPE;
    this.scopes.push(new Map([[e.accuVar, init.shape]]));
    this.scopes.push(new Map([[e.iterVar, iterShape]]));
    const condition = this.expr(e.loopCondition);
    const step = this.expr(e.loopStep);
    this.scopes.pop();
    const result = this.expr(e.result);
    this.scopes.pop();
    const count = source.shape.size;
    const perIteration = saturatingAdd(condition.cost, step.cost);
    // With a constant-true condition every element is visited; otherwise the loop may stop after the
    // first condition check (all, exists), so only that check is certain.
    const alwaysRuns =
      e.loopCondition.kind === "literal" &&
      e.loopCondition.value.type === "bool" &&
      e.loopCondition.value.value;
    const loopMin = alwaysRuns
      ? saturatingMultiply(count, perIteration).min
      : count.min > 0n
        ? condition.cost.min
        : 0n;
    const loop = range(loopMin, saturatingMultiply(count, perIteration).max);
    const accumulatesList = e.accuInit.kind === "list";
    const shape: Shape = accumulatesList ? shapeOf(range(0n, count.max), step.shape.elem) : result.shape;
    return { cost: sum([source.cost, init.cost, result.cost, loop]), shape };
  }
}
