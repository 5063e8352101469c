/**
 * `compile`: a checked AST to a tree of closures. Overloads are resolved here, once; each closure is
 * specialised by its node's static type and arity (a field read of a declared object is a property read
 * with its zero default, `&&` short-circuits, a call with decided overloads calls the implementation
 * directly). Runtime errors are values; only `CostLimitExceeded` is thrown.
 */
import type { CallExpr, ComprehensionExpr, Expr, Literal } from "../ast.js";
import { assertNever } from "../ast.js";
import type { CheckedAst, Reference } from "../check/checker.js";
import { CALL_COSTS, stringEqualityUnits, traversalUnits } from "../cost/calls.js";
import { COST, scaled } from "../cost/constants.js";
import type { Diagnostic } from "../diagnostics.js";
import type { CallSite, ContextualOverload, Env, OverloadDecl, PreparedCall } from "../env.js";
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
import { codePointLength } from "../source.js";
import { standardFunctions } from "../std/index.js";
import { compileRegex } from "../std/regex.js";
import { runtimeTypeName, T, type Type } from "../types.js";
import { noSuchOverload, selectOverload } from "./dispatch.js";
import { charge, type Frame, type Node } from "./frame.js";
import { hostReader, verbatimTypeof } from "./host.js";
import { conditional, logical, type Shape } from "./logical.js";
import {
  AFFIX_TESTS,
  affixUnits,
  type LoopTest,
  quantifiedTest,
  quantifierLoop,
  rangeItems,
} from "./loops.js";
import {
  buildRecord,
  constantText,
  equalsConstant,
  fieldEquality,
  type Known,
  type Operand,
  operand,
  readField,
  readSlot,
  recordPlan,
  shaped,
  testField,
} from "./operands.js";

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
  const node = c.expr(checked.expr);
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
  /** Nodes whose value is known at compile time, with what evaluating them charges. */
  private readonly constants = new Map<Node, Known>();
  /** Nodes that an `Operand` can do in place, by what they do. */
  private readonly inPlace = new Map<Node, Operand>();
  /** Predicates a quantifier can run inside its own loop, by what they test. */
  private readonly loopTests = new Map<Node, LoopTest>();

  constructor(
    private readonly checked: CheckedAst,
    private readonly env: Env,
  ) {}

  private operand(node: Node): Operand {
    const known = this.constants.get(node);
    if (known !== undefined) return shaped({ kind: "constant", value: known.value, cost: known.cost });
    return shaped(this.inPlace.get(node) ?? { kind: "node", node });
  }

  private operands(nodes: readonly Node[]): Operand[] {
    return nodes.map((n) => this.operand(n));
  }

  private typeOf(e: Expr): Type {
    return this.checked.types.get(e.id) ?? T.dyn;
  }

  private ref(e: Expr): Reference | undefined {
    return this.checked.refs.get(e.id);
  }

  expr(e: Expr): Node {
    switch (e.kind) {
      case "literal": {
        const v = literalValue(e.value);
        const node: Node = () => v;
        this.constants.set(node, { value: v, cost: 0 });
        return node;
      }
      case "ident":
        return this.ident(e.name, this.ref(e));
      case "select":
        return this.select(e);
      case "call":
        return this.call(e);
      case "list": {
        const elements = e.elements.map((x) => this.expr(x));
        return this.fold(this.list(elements), elements);
      }
      case "map": {
        const entries = e.entries.map((en) => [this.expr(en.key), this.expr(en.value)] as const);
        const inputs: Node[] = [];
        for (const [k, v] of entries) inputs.push(k, v);
        return this.fold(this.map(entries), inputs);
      }
      case "struct":
        return this.struct(e);
      case "comprehension":
        return this.comprehension(e);
      default:
        return assertNever(e);
    }
  }

  /**
   * A node whose inputs are all constants is run once here, and replaced by one that charges the same
   * units and returns the same value: `duration("1h")` is not parsed on every row. Errors are left to
   * run time, where they belong to the evaluation that meets them.
   */
  private fold(node: Node, inputs: readonly Node[]): Node {
    if (!inputs.every((n) => this.constants.has(n))) return node;
    const frame: Frame = { vars: {}, slots: [], cost: 0, limit: Number.POSITIVE_INFINITY };
    const value = node(frame);
    if (isError(value)) return node;
    const cost = frame.cost;
    const folded: Node =
      cost === 0
        ? () => value
        : (f) => {
            charge(f, cost);
            return value;
          };
    this.constants.set(folded, { value, cost });
    return folded;
  }

  private slot(name: string): number | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]?.get(name);
      if (s !== undefined) return s;
    }
    return undefined;
  }

  /** An identifier; `qualified` marks a select the checker resolved as a whole name (`a.b`), never a local. */
  private ident(name: string, ref: Reference | undefined, qualified = false): Node {
    const local = qualified ? undefined : this.slot(name);
    if (local !== undefined) {
      const node: Node = (f) => readSlot(f, local);
      this.inPlace.set(node, { kind: "slot", slot: local });
      return node;
    }
    if (ref?.kind === "type") {
      const value = new TypeValue(runtimeTypeName(ref.type));
      return () => value;
    }
    const varName = ref?.kind === "variable" ? ref.name : name;
    const decl = this.env.variable(varName);
    const read = hostReader(decl?.type ?? T.dyn);
    // The activation is a plain object: a name Object.prototype also has must be an own property.
    const inherited = varName in Object.prototype;
    return (f) => {
      charge(f, COST.selectAndIdent);
      const raw = inherited && !Object.hasOwn(f.vars, varName) ? undefined : f.vars[varName];
      return raw === undefined && decl === undefined
        ? new CelError(`no such attribute: ${varName}`)
        : read(raw);
    };
  }

  private select(e: Extract<Expr, { kind: "select" }>): Node {
    const ref = this.ref(e);
    if (ref !== undefined && !e.testOnly) return this.ident(e.field, ref, true);
    const operand = this.expr(e.operand);
    const operandType = this.typeOf(e.operand);
    const field = e.field;
    // A field of a computed value (a literal, a call's result) costs one more step than an attribute's.
    const units = e.testOnly ? COST.presenceTest : COST.selectAndIdent + (isAttribute(e.operand) ? 0 : 1);
    if (operandType.kind === "object") {
      const decl = this.env.objectType(operandType.name)?.fields[field];
      const read = hostReader(decl?.type ?? T.dyn);
      const direct = this.declaredObjectVariable(e.operand);
      if (!e.testOnly && direct !== undefined && !(field in Object.prototype)) {
        // `event.type`: the commonest node of a rule, read in one closure.
        const verbatim = verbatimTypeof(decl?.type ?? T.dyn);
        const node: Node = (f) => readField(f, direct, field, read, verbatim);
        this.inPlace.set(node, { kind: "field", variable: direct, field, read, verbatim });
        return node;
      }
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

  private call(e: Extract<Expr, { kind: "call" }>): Node {
    const args = e.target === undefined ? e.args : [e.target, ...e.args];
    switch (e.fn) {
      case Op.logicalAnd:
      case Op.logicalOr:
        return this.logicalChain(e);
      case Op.conditional:
        return conditional(
          this.expr(args[0] as Expr),
          this.expr(args[1] as Expr),
          this.expr(args[2] as Expr),
        );
      case Op.notStrictlyFalse: {
        const a = this.expr(args[0] as Expr);
        return (f) => {
          const v = a(f);
          charge(f, COST.call);
          return v !== false;
        };
      }
    }
    const ref = this.ref(e);
    const overloads = ref?.kind === "function" ? ref.overloads : [];
    const argTypes = args.map((a) => this.typeOf(a));
    const decided = overloads.length === 1 && !argTypes.some((t) => t.kind === "dyn" || t.kind === "param");
    const only = overloads[0];
    if (decided && only?.prepare !== undefined) return this.preparedCall(only, args);
    const nodes = args.map((a) => this.expr(a));
    const standard = overloads.length > 0 && overloads.every((o) => STANDARD_OVERLOADS.has(o));
    if (standard && e.fn === "type" && args.length === 1) {
      const t = this.typeOf(args[0] as Expr);
      if (t.kind === "object") {
        const value = new TypeValue(t.name);
        const a = nodes[0] as Node;
        return (f) => {
          const v = a(f);
          return isError(v) ? v : value;
        };
      }
    }
    if (standard && e.fn === "matches" && args.length === 2) {
      const pattern = args[1];
      if (pattern?.kind === "literal" && pattern.value.type === "string") {
        const re = compileRegex(pattern.value.value);
        if (isError(re)) {
          this.errors.push({
            code: "check",
            message: re.message,
            offset: this.checked.offsets.get(pattern.id) ?? 0,
          });
          return () => re;
        }
        const input = nodes[0] as Node;
        const patternUnits = scaled(codePointLength(pattern.value.value), COST.regexLengthFactor);
        return (f) => {
          const s = input(f);
          if (isError(s)) return s;
          if (typeof s !== "string") return noSuchOverload(e.fn);
          charge(f, scaled(1 + codePointLength(s), COST.stringTraversalFactor) * patternUnits);
          return re.test(s);
        };
      }
    }
    const operands = this.operands(nodes);
    if ((e.fn === Op.equals || e.fn === Op.notEquals) && args.length === 2) {
      const test = fieldEquality(argTypes, operands, e.fn === Op.notEquals);
      if (test !== undefined) {
        const node: Node = (f) => testField(f, test);
        this.inPlace.set(node, test);
        return node;
      }
      const special = primitiveEquality(argTypes, operands, e.fn === Op.notEquals);
      if (special !== undefined) return special;
    }
    const constantText = this.constants.get(nodes[1] as Node);
    if (standard && decided && nodes.length === 2 && typeof constantText?.value === "string") {
      const o = overloads[0] as OverloadDecl;
      const input = operands[0] as Operand;
      const fused = stringTest(o, input, constantText.value, constantText.cost);
      const method = AFFIX_TESTS.get(o.id);
      if (fused !== undefined && method !== undefined && input.kind === "slot") {
        const units = affixUnits(constantText.value, constantText.cost);
        this.loopTests.set(fused, { slot: input.slot, method, text: constantText.value, units });
      }
      if (fused !== undefined) return fused;
    }
    // An index is a step of an attribute, like a select; on a computed value it costs one more.
    const extra = e.fn === Op.index && !isAttribute(args[0] as Expr) ? 1 : 0;
    const node = strictCall(
      e.fn,
      overloads,
      nodes,
      operands,
      decided,
      extra,
      this.preparedForDyn(overloads, nodes),
    );
    const inner = this.loopTests.get(nodes[0] as Node);
    if (inner !== undefined && inner.negation === undefined && isLogicalNot(only, decided, nodes.length)) {
      this.loopTests.set(node, { ...inner, negation: callUnits(only as OverloadDecl, 0) as number });
    }
    // Only the standard library is known to be pure; a declared function may read the world.
    return standard ? this.fold(node, nodes) : node;
  }

  /** Under dyn a contextual candidate is chosen per call, so each is prepared for a site with no records. */
  private preparedForDyn(overloads: readonly OverloadDecl[], nodes: readonly Node[]): Prepared {
    if (!overloads.some((o) => o.prepare !== undefined)) return NONE_PREPARED;
    const unknownSite: CallSite = {
      constants: nodes.map((n) => this.constants.get(n)?.value),
      recordKeys: nodes.map(() => undefined),
    };
    return new Map(
      overloads.flatMap((o) => (o.prepare === undefined ? [] : [[o, o.prepare(unknownSite)] as const])),
    );
  }

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
      operands.push(this.operand(this.expr(x)));
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
    const nodes = args.map((a, i) => (records[i] === undefined ? this.expr(a) : undefined));
    const constants = nodes.map((n) => (n === undefined ? undefined : this.constants.get(n)?.value));
    const call = o.prepare({ constants, recordKeys });
    const units = callUnits(o, 0);
    const plans = records.map((r) => (r === undefined ? undefined : recordPlan(this.operands(r))));
    const thunks = args.map((_, i) => {
      const plan = plans[i];
      return plan === undefined ? (nodes[i] as Node) : (f: Frame) => buildRecord(f, plan);
    });
    // The primitives take two or three arguments at a fixed cost, one of them a record: those get
    // closures without a loop, building the record in place.
    if (typeof units === "number" && thunks.length === 2) {
      const [a, b] = this.operands(thunks) as [Operand, Operand];
      const [ra, rb] = plans;
      return (f) => {
        const x = ra === undefined ? operand(f, a) : buildRecord(f, ra);
        if (isError(x)) return x;
        const y = rb === undefined ? operand(f, b) : buildRecord(f, rb);
        if (isError(y)) return y;
        charge(f, units);
        return call(f.vars, [x, y]);
      };
    }
    if (typeof units === "number" && thunks.length === 3) {
      const [a, b, c] = this.operands(thunks) as [Operand, Operand, Operand];
      const [ra, rb, rc] = plans;
      return (f) => {
        const x = ra === undefined ? operand(f, a) : buildRecord(f, ra);
        if (isError(x)) return x;
        const y = rb === undefined ? operand(f, b) : buildRecord(f, rb);
        if (isError(y)) return y;
        const z = rc === undefined ? operand(f, c) : buildRecord(f, rc);
        if (isError(z)) return z;
        charge(f, units);
        return call(f.vars, [x, y, z]);
      };
    }
    return (f) => {
      const values: Value[] = [];
      for (const t of thunks) {
        const v = t(f);
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

  private map(entries: (readonly [Node, Node])[]): Node {
    // `{"type": "closed", "harness": event.harness}`: distinct string-literal keys need no checks at run time.
    const keys = entries.map(([k]) => this.constants.get(k)?.value);
    if (keys.every((k): k is string => typeof k === "string") && new Set(keys).size === keys.length) {
      const values = entries.map(([, v]) => v);
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
        const key = k(f);
        if (isError(key)) return key;
        const value = v(f);
        if (isError(value)) return value;
        pairs.push([key, value]);
      }
      return CelMap.from(pairs);
    };
  }

  private struct(e: Extract<Expr, { kind: "struct" }>): Node {
    const fields = e.fields.map((fl) => [fl.name, this.expr(fl.value)] as const);
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
    const range = this.expr(e.iterRange);
    const step = e.loopStep as CallExpr;
    this.scopes.push(new Map([[e.accuVar, this.slotCount++]]));
    const iter = this.slotCount++;
    this.scopes.push(new Map([[e.iterVar, iter]]));
    const predicate = this.expr(step.args[1] as Expr);
    this.scopes.pop();
    this.scopes.pop();
    const test = this.loopTests.get(predicate);
    if (test !== undefined && test.slot === iter) return quantifiedTest(this.operand(range), test, exists);
    return quantifierLoop(this.operand(range), predicate, iter, exists);
  }

  private comprehension(e: ComprehensionExpr): Node {
    const macro = this.checked.macroCalls.get(e.id)?.fn;
    if (macro === "exists" || macro === "all") return this.quantifier(e, macro === "exists");
    const range = this.expr(e.iterRange);
    const init = this.expr(e.accuInit);
    const accu = this.slotCount++;
    this.scopes.push(new Map([[e.accuVar, accu]]));
    const iter = this.slotCount++;
    this.scopes.push(new Map([[e.iterVar, iter]]));
    const condition = this.expr(e.loopCondition);
    const step = this.expr(e.loopStep);
    this.scopes.pop();
    const result = this.expr(e.result);
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

/** Whether a call runs the standard `!` of one bool, which `strictCall` compiles without a call. */
function isLogicalNot(o: OverloadDecl | undefined, decided: boolean, arity: number): boolean {
  return o !== undefined && decided && arity === 1 && o.id === "logical_not" && STANDARD_OVERLOADS.has(o);
}

/** What one call of an overload charges: fixed, or computed from its arguments by the shared rule. */
function callUnits(o: OverloadDecl, extra: number): number | ((args: readonly Value[]) => number) {
  if (o.cost !== undefined) return o.cost.fixed + extra;
  const rule = CALL_COSTS[o.id];
  if (rule === undefined) return COST.call + extra;
  return extra === 0 ? rule.runtime : (args) => rule.runtime(args) + extra;
}

/** The contextual overloads of a call, each prepared for a site whose arguments are all plain values. */
type Prepared = ReadonlyMap<OverloadDecl, PreparedCall>;
const NONE_PREPARED: Prepared = new Map();

function strictCall(
  fn: string,
  overloads: readonly OverloadDecl[],
  args: Node[],
  operands: readonly Operand[],
  decided: boolean,
  extra: number,
  prepared: Prepared,
): Node {
  const only = overloads[0];
  if (only === undefined) return () => noSuchOverload(fn);
  const impl = only.impl;
  const units = callUnits(only, extra);
  if (impl === undefined || !decided)
    return dispatchingCall(fn, overloads, args, decided, extra, units, prepared);
  // A constant charge is read as is; a size-dependent one is computed from the argument values.
  const fixed = typeof units === "number" ? units : undefined;
  const sized = typeof units === "function" ? units : undefined;
  switch (args.length) {
    case 1: {
      const [a] = operands as [Operand];
      if (isLogicalNot(only, decided, 1) && fixed !== undefined) {
        // `!x`, the commonest unary call of a rule, without a call of its implementation.
        return (f) => {
          const x = operand(f, a);
          if (isError(x)) return x;
          charge(f, fixed);
          return !x;
        };
      }
      return (f) => {
        const x = operand(f, a);
        if (isError(x)) return x;
        charge(f, fixed ?? (sized as (v: readonly Value[]) => number)([x]));
        return impl(x);
      };
    }
    case 2: {
      const [a, b] = operands as [Operand, Operand];
      const order = STANDARD_OVERLOADS.has(only) ? INT_ORDERINGS.get(only.id) : undefined;
      if (order !== undefined && fixed !== undefined) {
        // `count(…) >= 2`: two bigints are ordered by the JS operator, as the library orders ints.
        return (f) => {
          const x = operand(f, a);
          if (isError(x)) return x;
          const y = operand(f, b);
          if (isError(y)) return y;
          charge(f, fixed);
          return typeof x === "bigint" && typeof y === "bigint" ? order(x, y) : impl(x, y);
        };
      }
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
  return dispatchingCall(fn, overloads, args, decided, extra, units, prepared);
}

/** The general call: any arity, overloads chosen per call under dyn, contextual functions given the activation. */
function dispatchingCall(
  fn: string,
  overloads: readonly OverloadDecl[],
  args: Node[],
  decided: boolean,
  extra: number,
  units: number | ((args: readonly Value[]) => number),
  prepared: Prepared,
): Node {
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

const STANDARD_OVERLOADS: ReadonlySet<OverloadDecl> = new Set(standardFunctions.flatMap((f) => f.overloads));

/** The standard ordering of two ints, by overload id, as the JS operators on bigints compute it. */
const INT_ORDERINGS: ReadonlyMap<string, (a: bigint, b: bigint) => boolean> = new Map([
  ["less_int64", (a: bigint, b: bigint) => a < b],
  ["less_equals_int64", (a: bigint, b: bigint) => a <= b],
  ["greater_int64", (a: bigint, b: bigint) => a > b],
  ["greater_equals_int64", (a: bigint, b: bigint) => a >= b],
]);

const IDENTITY_EQUALITY = new Set(["string", "bool", "int", "double"]);

/**
 * `==` and `!=` between two values of one primitive type whose CEL equality is JS identity (strings,
 * bools, bigints, doubles with NaN unequal to itself): the most common test in a rule, so it gets its
 * own closure. The charge is the shared equality rule's.
 */
function primitiveEquality(
  types: readonly Type[],
  operands: readonly Operand[],
  negate: boolean,
): Node | undefined {
  const [ta, tb] = types;
  if (ta === undefined || tb === undefined || ta.kind !== tb.kind || !IDENTITY_EQUALITY.has(ta.kind))
    return undefined;
  const [a, b] = operands as [Operand, Operand];
  if (ta.kind === "string" && b.kind === "constant" && typeof b.value === "string") {
    // `p == "internal/"`: the constant's code points are counted here, once.
    const c = constantText(b.value, b.cost, negate);
    return (f) => {
      const x = operand(f, a);
      return isError(x) ? x : equalsConstant(f, x as string, c);
    };
  }
  const units = ta.kind === "string" ? stringEqualityUnits : undefined;
  return (f) => {
    const x = operand(f, a);
    if (isError(x)) return x;
    const y = operand(f, b);
    if (isError(y)) return y;
    charge(f, units === undefined ? COST.call : units(x as string, y as string));
    return negate ? x !== y : x === y;
  };
}

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

/**
 * `p.startsWith("internal/")`, `p.endsWith(…)`, `p.contains(…)` with a constant argument: the
 * argument's share of the shared cost rule is worked out once.
 */
function stringTest(o: OverloadDecl, input: Operand, text: string, textCost: number): Node | undefined {
  const impl = o.impl;
  if (impl === undefined) return undefined;
  const textUnits = traversalUnits(text);
  if (AFFIX_TESTS.has(o.id)) {
    const units = affixUnits(text, textCost);
    if (input.kind === "slot") {
      // `p.startsWith("internal/")` in a comprehension: the loop's hottest node, read in one closure.
      const slot = input.slot;
      return (f) => {
        const x = readSlot(f, slot);
        if (isError(x)) return x;
        charge(f, units);
        return impl(x, text);
      };
    }
    return (f) => {
      const x = operand(f, input);
      if (isError(x)) return x;
      charge(f, units);
      return impl(x, text);
    };
  }
  if (o.id === "contains_string") {
    return (f) => {
      const x = operand(f, input);
      if (isError(x)) return x;
      charge(f, textCost + traversalUnits(x as string) * textUnits);
      return impl(x, text);
    };
  }
  return undefined;
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
