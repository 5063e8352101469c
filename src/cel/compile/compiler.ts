/**
 * `compile`: a checked AST to a tree of closures. Overloads are resolved here, once; each closure is
 * chosen by its node's static type and arity (a field read of a declared object is a property read
 * with its zero default, `&&` short-circuits, a call with decided overloads calls the implementation
 * directly). A call is planned plainly and then built by the first specialisation that matches it
 * (`specialisations.ts`). Runtime errors are values; only `CostLimitExceeded` is thrown.
 */
import type { CallExpr, ComprehensionExpr, Expr, Literal } from "../ast.js";
import { assertNever } from "../ast.js";
import type { CheckedAst, Reference } from "../check/checker.js";
import { COST } from "../cost/constants.js";
import type { Diagnostic } from "../diagnostics.js";
import type { ContextualOverload, Env } from "../env.js";
import { Op } from "../operators.js";
import {
  CelError,
  CelMap,
  isError,
  isObjectValue,
  type Result,
  TypeValue,
  UInt,
  type Value,
} from "../runtime/values.js";
import { runtimeTypeName, T, type Type } from "../types.js";
import { type Built, operandOf, operandsOf } from "./built.js";
import { callUnits, type PlainCall, plainCall, STANDARD_OVERLOADS } from "./calls.js";
import { charge, type Frame, fitsWhole, type Node } from "./frame.js";
import { hostReader, layoutOf, verbatimTypeof } from "./host.js";
import { LaidOut } from "./layout.js";
import { conditional, logical, type Shape } from "./logical.js";
import { quantifiedTest, quantifierLoop, rangeItems } from "./loops.js";
import {
  buildRecord,
  laidRecord,
  type Operand,
  operand,
  type RecordPlan,
  readField,
  readSlot,
  recordPlan,
} from "./operands.js";
import { SPECIALISATIONS, type SpecialiseContext } from "./specialisations.js";

export interface CompiledExpr {
  readonly node: Node;
  /** Comprehension slots the frame must provide. */
  readonly slots: number;
}

export type CompileResult =
  | { readonly ok: true; readonly compiled: CompiledExpr }
  | { readonly ok: false; readonly errors: readonly Diagnostic[] };

export function compileChecked(checked: CheckedAst, env: Env): CompileResult {
  const c = new Compiler(checked, env);
  const { node } = c.expr(checked.expr);
  if (c.errors.length > 0) return { ok: false, errors: c.errors };
  return { ok: true, compiled: { node, slots: c.slotCount } };
}

function literalValue(v: Literal): Value {
  switch (v.type) {
    case "null":
      return null;
    case "uint":
      return new UInt(v.value);
    default:
      return v.value;
  }
}

class Compiler {
  readonly errors: Diagnostic[] = [];
  slotCount = 0;
  /** Comprehension variables in scope: name → slot, innermost last. */
  private readonly scopes: Map<string, number>[] = [];

  constructor(
    private readonly checked: CheckedAst,
    private readonly env: Env,
  ) {}

  private typeOf(e: Expr): Type {
    return this.checked.types.get(e.id) ?? T.dyn;
  }

  private ref(e: Expr): Reference | undefined {
    return this.checked.refs.get(e.id);
  }

  expr(e: Expr): Built {
    switch (e.kind) {
      case "literal": {
        const v = literalValue(e.value);
        return { node: () => v, known: { value: v, cost: 0 } };
      }
      case "ident":
        return this.ident(e.name, this.ref(e));
      case "select":
        return this.select(e);
      case "call":
        return this.call(e);
      case "list": {
        const elements = e.elements.map((x) => this.expr(x));
        return this.fold({ node: this.list(elements.map((b) => b.node)) }, elements);
      }
      case "map": {
        const entries = e.entries.map((en) => [this.expr(en.key), this.expr(en.value)] as const);
        const inputs: Built[] = [];
        for (const [k, v] of entries) inputs.push(k, v);
        return this.fold({ node: this.map(entries) }, inputs);
      }
      case "struct":
        return { node: this.struct(e) };
      case "comprehension":
        return { node: this.comprehension(e) };
      default:
        return assertNever(e);
    }
  }

  /**
   * A node whose inputs are all constants is run once here, and replaced by one that charges the same
   * units and returns the same value: `duration("1h")` is not parsed on every row. Errors are left to
   * run time, where they belong to the evaluation that meets them.
   */
  private fold(built: Built, inputs: readonly Built[]): Built {
    if (!inputs.every((b) => b.known !== undefined)) return built;
    const frame: Frame = { vars: {}, slots: [], cost: 0, limit: Number.POSITIVE_INFINITY };
    const value = built.node(frame);
    if (isError(value)) return built;
    const cost = frame.cost;
    const folded: Node =
      cost === 0
        ? () => value
        : (f) => {
            charge(f, cost);
            return value;
          };
    return { node: folded, known: { value, cost } };
  }

  private slot(name: string): number | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]?.get(name);
      if (s !== undefined) return s;
    }
    return undefined;
  }

  /** An identifier; `qualified` marks a select the checker resolved as a whole name (`a.b`), never a local. */
  private ident(name: string, ref: Reference | undefined, qualified = false): Built {
    const local = qualified ? undefined : this.slot(name);
    if (local !== undefined) {
      return { node: (f) => readSlot(f, local), inPlace: { kind: "slot", slot: local } };
    }
    if (ref?.kind === "type") {
      const value = new TypeValue(runtimeTypeName(ref.type));
      return { node: () => value };
    }
    const varName = ref?.kind === "variable" ? ref.name : name;
    const decl = this.env.variable(varName);
    const read = hostReader(decl?.type ?? T.dyn);
    // The activation is a plain object: a name Object.prototype also has must be an own property.
    const inherited = varName in Object.prototype;
    return {
      node: (f) => {
        charge(f, COST.selectAndIdent);
        const raw = inherited && !Object.hasOwn(f.vars, varName) ? undefined : f.vars[varName];
        return raw === undefined && decl === undefined
          ? new CelError(`no such attribute: ${varName}`)
          : read(raw);
      },
    };
  }

  private select(e: Extract<Expr, { kind: "select" }>): Built {
    const ref = this.ref(e);
    if (ref !== undefined && !e.testOnly) return this.ident(e.field, ref, true);
    const operandType = this.typeOf(e.operand);
    const field = e.field;
    const direct = this.declaredObjectVariable(e.operand);
    const fields = operandType.kind === "object" ? this.env.objectType(operandType.name)?.fields : undefined;
    if (direct === undefined || operandType.kind !== "object" || field in Object.prototype)
      return { node: this.selectNode(e, operandType, this.expr(e.operand).node) };
    const layout = fields === undefined ? undefined : layoutOf(fields);
    const index = layout?.index.get(field) ?? -1;
    if (e.testOnly) {
      // `has(event.f)` of an object laid out in its type's layout: the field's presence bit.
      const general = this.selectNode(e, operandType, this.expr(e.operand).node);
      if (index < 0) return { node: general };
      const bit = 1 << index;
      // The variable's read and the test are one segment: charged at once when the sum fits.
      const units = COST.selectAndIdent + COST.presenceTest;
      return {
        node: (f) => {
          const o = f.vars[direct];
          if (!(o instanceof LaidOut) || o.layout !== layout) return general(f);
          if (fitsWhole(f, units)) f.cost += units;
          else {
            charge(f, COST.selectAndIdent);
            charge(f, COST.presenceTest);
          }
          return (o.present & bit) !== 0;
        },
      };
    }
    // `event.type`: the commonest node of a rule, read in one closure.
    const type = fields?.[field]?.type ?? T.dyn;
    const access = {
      variable: direct,
      field,
      read: hostReader(type),
      verbatim: verbatimTypeof(type),
      layout,
      index,
    };
    return { node: (f) => readField(f, access), inPlace: { kind: "field", ...access } };
  }

  /** `x.f` and `has(x.f)` on a computed value, or on a variable by its declared type. */
  private selectNode(e: Extract<Expr, { kind: "select" }>, operandType: Type, operand: Node): Node {
    const field = e.field;
    // A field of a computed value (a literal, a call's result) costs one more step than an attribute's.
    const units = e.testOnly ? COST.presenceTest : COST.selectAndIdent + (isAttribute(e.operand) ? 0 : 1);
    if (operandType.kind === "object") {
      const decl = this.env.objectType(operandType.name)?.fields[field];
      const read = hostReader(decl?.type ?? T.dyn);
      if (e.testOnly) {
        return (f) => {
          const o = operand(f);
          if (isError(o)) return o;
          charge(f, units);
          const raw = (o as Record<string, unknown>)[field];
          return raw !== undefined && raw !== null && Object.hasOwn(o as object, field);
        };
      }
      // A declared field that Object.prototype does not also name can be read directly.
      if (!(field in Object.prototype)) {
        return (f) => {
          const o = operand(f);
          if (isError(o)) return o;
          charge(f, units);
          return read((o as Record<string, unknown>)[field]);
        };
      }
      return (f) => {
        const o = operand(f);
        if (isError(o)) return o;
        charge(f, units);
        return read(Object.hasOwn(o as object, field) ? (o as Record<string, unknown>)[field] : undefined);
      };
    }
    return (f) => {
      const o = operand(f);
      if (isError(o)) return o;
      charge(f, units);
      return e.testOnly ? presence(o, field) : dynamicField(o, field);
    };
  }

  /** The name of the declared object-typed variable `e` reads, when it is one (not a loop variable). */
  private declaredObjectVariable(e: Expr): string | undefined {
    if (e.kind !== "ident" || this.slot(e.name) !== undefined) return undefined;
    const ref = this.ref(e);
    const name = ref?.kind === "variable" ? ref.name : e.name;
    const decl = this.env.variable(name);
    return decl?.type.kind === "object" && !(name in Object.prototype) ? name : undefined;
  }

  /**
   * A call: the logical operators and the conditional by their own closures, a contextual overload
   * prepared for its site, and any other call planned plainly, then built by the first specialisation
   * that matches it or else by the plain closure. A standard call of constants is folded.
   */
  private call(e: Extract<Expr, { kind: "call" }>): Built {
    const args = e.target === undefined ? e.args : [e.target, ...e.args];
    switch (e.fn) {
      case Op.logicalAnd:
      case Op.logicalOr:
        return { node: this.logicalChain(e) };
      case Op.conditional:
        return {
          node: conditional(
            this.expr(args[0] as Expr).node,
            this.expr(args[1] as Expr).node,
            this.expr(args[2] as Expr).node,
          ),
        };
      case Op.notStrictlyFalse: {
        const a = this.expr(args[0] as Expr).node;
        return {
          node: (f) => {
            const v = a(f);
            charge(f, COST.call);
            return v !== false;
          },
        };
      }
    }
    const ref = this.ref(e);
    const overloads = ref?.kind === "function" ? ref.overloads : [];
    const argTypes = args.map((a) => this.typeOf(a));
    const decided = overloads.length === 1 && !argTypes.some((t) => t.kind === "dyn" || t.kind === "param");
    const only = overloads[0];
    if (decided && only?.prepare !== undefined) return { node: this.preparedCall(only, args) };
    const inputs = args.map((a) => this.expr(a));
    const call: PlainCall = {
      fn: e.fn,
      args,
      argTypes,
      overloads,
      decided,
      standard: overloads.length > 0 && overloads.every((o) => STANDARD_OVERLOADS.has(o)),
      inputs,
      operands: operandsOf(inputs),
      // An index is a step of an attribute, like a select; on a computed value it costs one more.
      extra: e.fn === Op.index && !isAttribute(args[0] as Expr) ? 1 : 0,
    };
    let built: Built | undefined;
    for (const specialise of SPECIALISATIONS) {
      built = specialise(call, this.context);
      if (built !== undefined) break;
    }
    built ??= { node: plainCall(call) };
    // Only the standard library is known to be pure; a declared function may read the world.
    return call.standard ? this.fold(built, inputs) : built;
  }

  private readonly context: SpecialiseContext = {
    error: (at, message) =>
      this.errors.push({ code: "check", message, offset: this.checked.offsets.get(at.id) ?? 0 }),
  };

  /**
   * A tree of one logical operator (`a && b && c`, which the parser balances) as one closure over its
   * operands in source order, keeping the tree's shape for the rare evaluation that needs it.
   */
  private logicalChain(e: CallExpr): Node {
    const operands: Operand[] = [];
    const shapeOf = (x: Expr): Shape => {
      if (x.kind === "call" && x.fn === e.fn && x.target === undefined && x.args.length === 2) {
        return [shapeOf(x.args[0] as Expr), shapeOf(x.args[1] as Expr)];
      }
      operands.push(operandOf(this.expr(x)));
      return operands.length - 1;
    };
    const shape = shapeOf(e);
    return logical(operands, shape, e.fn === Op.logicalOr);
  }

  /**
   * A contextual overload made for this call site (`ContextualOverload.prepare`). A map literal with
   * distinct string-literal keys is passed as the array of its values: charged as the literal would be
   * (its creation, then its values in order), but never built as a map.
   */
  private preparedCall(o: ContextualOverload, args: readonly Expr[]): Node {
    const recordKeys = args.map(literalKeys);
    const records = args.map((a, i) =>
      recordKeys[i] === undefined || a.kind !== "map"
        ? undefined
        : a.entries.map((en) => this.expr(en.value)),
    );
    const inputs = args.map((a, i) => (records[i] === undefined ? this.expr(a) : undefined));
    const constants = inputs.map((b) => b?.known?.value);
    const call = o.prepare({ constants, recordKeys });
    const units = callUnits(o, 0);
    const plans = records.map((r) => (r === undefined ? undefined : recordPlan(operandsOf(r))));
    const thunks: Built[] = args.map((_, i) => {
      const plan = plans[i];
      return plan === undefined ? (inputs[i] as Built) : { node: (f: Frame) => buildRecord(f, plan) };
    });
    // The primitives take two or three arguments at a fixed cost, one of them a record: those get
    // closures without a loop, building the record in place.
    const operands = operandsOf(thunks);
    if (typeof units === "number" && thunks.length === 2) {
      const [a, b] = operands as [Operand, Operand];
      const [ra, rb] = plans;
      const general: Node = (f) => {
        const x = ra === undefined ? operand(f, a) : buildRecord(f, ra);
        if (isError(x)) return x;
        const y = rb === undefined ? operand(f, b) : buildRecord(f, rb);
        if (isError(y)) return y;
        charge(f, units);
        return call(f.vars, [x, y]);
      };
      const total = segmentUnits(plans, operands, units);
      if (total === undefined) return general;
      const [va, vb] = constantValues(operands);
      // Constants and records of laid reads, then the call: one segment, charged at once when it
      // fits; otherwise, or for a record to convert, the general closure, nothing charged yet.
      return (f) => {
        const x = ra === undefined ? va : laidRecord(f, ra);
        if (x === undefined) return general(f);
        const y = rb === undefined ? vb : laidRecord(f, rb);
        if (y === undefined || !fitsWhole(f, total)) return general(f);
        f.cost += total;
        return call(f.vars, [x, y]);
      };
    }
    if (typeof units === "number" && thunks.length === 3) {
      const [a, b, c] = operands as [Operand, Operand, Operand];
      const [ra, rb, rc] = plans;
      const general: Node = (f) => {
        const x = ra === undefined ? operand(f, a) : buildRecord(f, ra);
        if (isError(x)) return x;
        const y = rb === undefined ? operand(f, b) : buildRecord(f, rb);
        if (isError(y)) return y;
        const z = rc === undefined ? operand(f, c) : buildRecord(f, rc);
        if (isError(z)) return z;
        charge(f, units);
        return call(f.vars, [x, y, z]);
      };
      const total = segmentUnits(plans, operands, units);
      if (total === undefined) return general;
      const [va, vb, vc] = constantValues(operands);
      return (f) => {
        const x = ra === undefined ? va : laidRecord(f, ra);
        if (x === undefined) return general(f);
        const y = rb === undefined ? vb : laidRecord(f, rb);
        if (y === undefined) return general(f);
        const z = rc === undefined ? vc : laidRecord(f, rc);
        if (z === undefined || !fitsWhole(f, total)) return general(f);
        f.cost += total;
        return call(f.vars, [x, y, z]);
      };
    }
    return (f) => {
      const values: Value[] = [];
      for (const t of thunks) {
        const v = t.node(f);
        if (isError(v)) return v;
        values.push(v);
      }
      charge(f, typeof units === "number" ? units : units(values));
      return call(f.vars, values);
    };
  }

  private list(elements: Node[]): Node {
    return (f) => {
      charge(f, COST.listCreateBase);
      const out: Value[] = new Array(elements.length);
      for (let i = 0; i < elements.length; i++) {
        const v = (elements[i] as Node)(f);
        if (isError(v)) return v;
        out[i] = v;
      }
      return out;
    };
  }

  private map(entries: (readonly [Built, Built])[]): Node {
    // `{"type": "closed", "harness": event.harness}`: distinct string-literal keys need no checks at run time.
    const keys = entries.map(([k]) => k.known?.value);
    if (keys.every((k): k is string => typeof k === "string") && new Set(keys).size === keys.length) {
      const values = entries.map(([, v]) => v.node);
      return (f) => {
        charge(f, COST.mapCreateBase);
        const out: Value[] = new Array(values.length);
        for (let i = 0; i < values.length; i++) {
          const v = (values[i] as Node)(f);
          if (isError(v)) return v;
          out[i] = v;
        }
        return CelMap.ofDistinctStrings(keys, out);
      };
    }
    return (f) => {
      charge(f, COST.mapCreateBase);
      const pairs: [Value, Value][] = [];
      for (const [k, v] of entries) {
        const key = k.node(f);
        if (isError(key)) return key;
        const value = v.node(f);
        if (isError(value)) return value;
        pairs.push([key, value]);
      }
      return CelMap.from(pairs);
    };
  }

  private struct(e: Extract<Expr, { kind: "struct" }>): Node {
    const fields = e.fields.map((fl) => [fl.name, this.expr(fl.value).node] as const);
    return (f) => {
      charge(f, COST.structCreateBase);
      const out: Record<string, Value> = {};
      for (const [name, node] of fields) {
        const v = node(f);
        if (isError(v)) return v;
        out[name] = v;
      }
      return out;
    };
  }

  private quantifier(e: ComprehensionExpr, exists: boolean): Node {
    const range = operandOf(this.expr(e.iterRange));
    const step = e.loopStep as CallExpr;
    this.scopes.push(new Map([[e.accuVar, this.slotCount++]]));
    const iter = this.slotCount++;
    this.scopes.push(new Map([[e.iterVar, iter]]));
    const predicate = this.expr(step.args[1] as Expr);
    this.scopes.pop();
    this.scopes.pop();
    const test = predicate.loopTest;
    if (test !== undefined && test.slot === iter) return quantifiedTest(range, test, exists);
    return quantifierLoop(range, predicate.node, iter, exists);
  }

  private comprehension(e: ComprehensionExpr): Node {
    const macro = this.checked.macroCalls.get(e.id)?.fn;
    if (macro === "exists" || macro === "all") return this.quantifier(e, macro === "exists");
    const range = this.expr(e.iterRange).node;
    const init = this.expr(e.accuInit).node;
    const accu = this.slotCount++;
    this.scopes.push(new Map([[e.accuVar, accu]]));
    const iter = this.slotCount++;
    this.scopes.push(new Map([[e.iterVar, iter]]));
    const condition = this.expr(e.loopCondition).node;
    const step = this.expr(e.loopStep).node;
    this.scopes.pop();
    const result = this.expr(e.result).node;
    this.scopes.pop();
    return (f) => {
      const items = rangeItems(range(f));
      if (isError(items)) return items;
      const slots = f.slots;
      slots[accu] = init(f) as Value;
      for (const x of items) {
        slots[iter] = x;
        const c = condition(f);
        if (c === false) break;
        if (isError(c)) return c;
        slots[accu] = step(f) as Value;
      }
      return result(f);
    };
  }
}

/**
 * What a prepared call charges in all when each argument is a constant of whole cost or a record of
 * laid reads (`RecordPlan.laid`): a fixed sum, known here; undefined when any argument is otherwise.
 */
function segmentUnits(
  plans: readonly (RecordPlan | undefined)[],
  operands: readonly Operand[],
  units: number,
): number | undefined {
  let total = units;
  for (let i = 0; i < operands.length; i++) {
    const plan = plans[i];
    const o = operands[i] as Operand;
    if (plan !== undefined) {
      if (plan.laid === undefined) return undefined;
      total += plan.units;
    } else if (o.kind === "constant" && Number.isInteger(o.cost)) total += o.cost;
    else return undefined;
  }
  return Number.isInteger(total) ? total : undefined;
}

/** Each constant operand's value (null in the place of any other). */
const constantValues = (operands: readonly Operand[]): Value[] =>
  operands.map((o) => (o.kind === "constant" ? o.value : null));

/** The keys of a map literal whose keys are distinct string literals, in source order. */
function literalKeys(e: Expr): readonly string[] | undefined {
  if (e.kind !== "map") return undefined;
  const keys: string[] = [];
  for (const { key } of e.entries) {
    if (key.kind !== "literal" || key.value.type !== "string") return undefined;
    keys.push(key.value.value);
  }
  return new Set(keys).size === keys.length ? keys : undefined;
}

/** Whether `e` is an attribute: a variable, or selects and indexes applied to one. */
export function isAttribute(e: Expr): boolean {
  if (e.kind === "ident") return true;
  if (e.kind === "select") return !e.testOnly && isAttribute(e.operand);
  if (e.kind === "call" && e.fn === Op.index && e.target === undefined && e.args.length === 2) {
    return isAttribute(e.args[0] as Expr);
  }
  return false;
}

/** `has(x.f)` on a value whose type is known only at run time. */
function presence(o: Value, field: string): Result {
  if (o instanceof CelMap) return o.has(field);
  if (isObjectValue(o)) {
    const raw = (o as Record<string, unknown>)[field];
    return Object.hasOwn(o, field) && raw !== undefined && raw !== null;
  }
  return new CelError(`invalid type for field selection: ${o === null ? "null" : typeof o}`);
}

/** `x.f` on a value whose type is known only at run time: a map key or an object field. */
function dynamicField(o: Value, field: string): Result {
  if (o instanceof CelMap) {
    const v = o.get(field);
    return v === undefined ? new CelError(`no such key: ${field}`) : v;
  }
  if (isObjectValue(o)) {
    if (!Object.hasOwn(o, field)) return new CelError(`no such field: ${field}`);
    return (o as Record<string, unknown>)[field] as Value;
  }
  return new CelError(`type does not support field selection`);
}
