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
import { charge, type Frame, fitsWhole, type Node } from "./frame.js";
import { dynReader, type HostReader, hostReader, verbatimTypeof } from "./host.js";

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

const isError = (v: Result): v is CelError => v instanceof CelError;

/** A node whose value is known at compile time, with what evaluating it charges. */
interface Known {
  readonly value: Value;
  readonly cost: number;
}

/**
 * An argument as a specialised closure takes it. Calling a closure costs more than what the commonest
 * ones do, so those are done in place: a value known at compile time (charging what computing it
 * charged, if anything), a field of a declared object variable (`event.type`), a comprehension variable.
 * Anything else runs its node.
 */
type Operand =
  | { readonly kind: "node"; readonly node: Node }
  | { readonly kind: "constant"; readonly value: Value; readonly cost: number }
  | {
      readonly kind: "field";
      readonly variable: string;
      readonly field: string;
      readonly read: HostReader;
      /** The `typeof` of a host value that is its own CEL value (`"string"` for a string field). */
      readonly verbatim: string | undefined;
    }
  | FieldTest
  | { readonly kind: "slot"; readonly slot: number };

/**
 * An operand with every property of every kind, in one order: the closures that read operands then
 * see objects of a single shape, which the engine reads faster than four.
 */
function shaped(o: Operand): Operand {
  const p: Partial<OperandFields> = o;
  const all = {
    kind: o.kind,
    node: p.node,
    value: p.value ?? null,
    cost: p.cost ?? 0,
    variable: p.variable ?? "",
    field: p.field ?? "",
    read: p.read ?? dynReader,
    verbatim: p.verbatim,
    slot: p.slot ?? -1,
    text: p.text ?? "",
    negate: p.negate ?? false,
  };
  return all as Operand;
}

/** Every property an operand of some kind has. */
interface OperandFields {
  readonly node: Node;
  readonly value: Value;
  readonly cost: number;
  readonly variable: string;
  readonly field: string;
  readonly read: HostReader;
  readonly verbatim: string | undefined;
  readonly slot: number;
  readonly text: string;
  readonly negate: boolean;
}

/** What running the operand's node would do, charge for charge. */
function operand(f: Frame, o: Operand): Result {
  switch (o.kind) {
    case "node":
      return o.node(f);
    case "constant":
      if (o.cost !== 0) charge(f, o.cost);
      return o.value;
    case "field":
      return readField(f, o.variable, o.field, o.read, o.verbatim);
    case "slot":
      return readSlot(f, o.slot);
    case "test":
      return testField(f, o);
  }
}

/** `event.type == "closed"` (or `!=`): a string field against a string constant, read in place. */
interface FieldTest {
  readonly kind: "test";
  readonly variable: string;
  readonly field: string;
  readonly read: HostReader;
  readonly verbatim: string | undefined;
  readonly text: string;
  /** What computing the constant charged (nothing, for a literal). */
  readonly cost: number;
  readonly negate: boolean;
}

/**
 * A `FieldTest`, charged as `primitiveEquality` charges it: against a short constant, 1 unit (0 when
 * either string is empty) together with the constant's own cost; against a longer one, the constant's
 * cost and then the shared equality rule.
 */
function testField(f: Frame, t: FieldTest): Result {
  const x = readField(f, t.variable, t.field, t.read, t.verbatim);
  if (isError(x)) return x;
  const text = t.text;
  if (text.length <= SHORT_CONSTANT) {
    charge(f, t.cost + (text.length === 0 || (x as string).length === 0 ? 0 : COST.call));
  } else {
    if (t.cost !== 0) charge(f, t.cost);
    charge(f, stringEqualityUnits(x as string, text));
  }
  return t.negate ? x !== text : x === text;
}

/** The `FieldTest` that `a == b` or `a != b` is, when it is one. */
function fieldEquality(
  types: readonly Type[],
  operands: readonly Operand[],
  negate: boolean,
): FieldTest | undefined {
  const [ta, tb] = types;
  const [a, b] = operands;
  if (ta?.kind !== "string" || tb?.kind !== "string" || a?.kind !== "field" || b?.kind !== "constant")
    return undefined;
  if (typeof b.value !== "string") return undefined;
  const { variable, field, read, verbatim } = a;
  return shaped({
    kind: "test",
    variable,
    field,
    read,
    verbatim,
    text: b.value,
    cost: b.cost,
    negate,
  }) as FieldTest;
}

/**
 * `event.type`: a declared object variable's field, read as one step (ident and select, 2 units). A
 * value that is its own CEL value (a string in a string field) is returned without calling its reader.
 */
function readField(
  f: Frame,
  variable: string,
  field: string,
  read: HostReader,
  verbatim: string | undefined,
): Result {
  charge(f, 2 * COST.selectAndIdent);
  const o = f.vars[variable];
  if (o === undefined || o === null) return read(undefined);
  if (typeof o !== "object") return notAnObject(o, variable);
  const raw = (o as Record<string, unknown>)[field];
  // Each case tests a constant `typeof`, which the engine does without computing the type's name.
  switch (verbatim) {
    case "string":
      return typeof raw === "string" ? raw : read(raw);
    case "boolean":
      return typeof raw === "boolean" ? raw : read(raw);
    case "number":
      return typeof raw === "number" ? raw : read(raw);
    default:
      return read(raw);
  }
}

/** A comprehension variable. */
function readSlot(f: Frame, slot: number): Value {
  charge(f, COST.selectAndIdent);
  return f.slots[slot] as Value;
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
    if ((e.fn === Op.equals || e.fn === Op.notEquals) && args.length === 2) {
      const operands = this.operands(nodes);
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
      const input = this.operand(nodes[0] as Node);
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
    // Under dyn a contextual candidate is chosen per call, so none of its arguments is a record.
    const unknownSite: CallSite = {
      constants: nodes.map((n) => this.constants.get(n)?.value),
      recordKeys: nodes.map(() => undefined),
    };
    const prepared = new Map(
      overloads.flatMap((o) => (o.prepare === undefined ? [] : [[o, o.prepare(unknownSite)] as const])),
    );
    const node = strictCall(e.fn, overloads, nodes, this.operands(nodes), decided, extra, prepared);
    const inner = this.loopTests.get(nodes[0] as Node);
    if (inner !== undefined && inner.negation === undefined && isLogicalNot(only, decided, nodes.length)) {
      this.loopTests.set(node, { ...inner, negation: callUnits(only as OverloadDecl, 0) as number });
    }
    // Only the standard library is known to be pure; a declared function may read the world.
    return standard ? this.fold(node, nodes) : node;
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
      const r = range(f);
      if (isError(r)) return r;
      let items: Iterable<Value>;
      if (Array.isArray(r)) items = r as readonly Value[];
      else if (r instanceof CelMap) items = r.keys();
      else return new CelError(`cannot iterate over ${r === null ? "null" : typeof r}`);
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
 * `all` and `exists` as a direct loop over the predicate: what the general comprehension would do for
 * their expansion, step for step and unit for unit (the condition `@not_strictly_false(…)` and the
 * step `@result && p` or `@result || p`), without evaluating the expansion's scaffolding as closures.
 */
/** The loop condition's units: `@not_strictly_false(@result)`, and for exists `…(!@result)`. */
const ALL_CHECK = COST.selectAndIdent + COST.call;
const EXISTS_CHECK = ALL_CHECK + COST.call;

function quantifierLoop(range: Operand, predicate: Node, iter: number, exists: boolean): Node {
  // `all` continues while the accumulator is not false (ident + call = 2 units); `exists` while it is
  // not true, through `!_` (3 units, or 2 when the accumulator is an error, which `!_` passes on free).
  const stopOn = exists;
  const op = exists ? Op.logicalOr : Op.logicalAnd;
  return (f) => {
    const r = operand(f, range);
    if (isError(r)) return r;
    let items: readonly Value[];
    if (Array.isArray(r)) items = r as readonly Value[];
    else if (r instanceof CelMap) items = [...r.keys()];
    else return new CelError(`cannot iterate over ${r === null ? "null" : typeof r}`);
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
      if (p === stopOn) accu = stopOn;
      else if (!isError(accu)) accu = isError(p) ? p : typeof p === "boolean" ? !stopOn : noSuchOverload(op);
    }
    charge(f, COST.selectAndIdent);
    return accu;
  };
}

/**
 * A predicate of a quantifier that tests its loop variable against a constant, `p.startsWith("a/")`
 * or `!p.endsWith("_test.go")`, run by `quantifiedTest` without calling a closure per element.
 */
interface LoopTest {
  readonly slot: number;
  readonly method: "startsWith" | "endsWith";
  readonly text: string;
  /** What the test charges, beyond reading the loop variable. */
  readonly units: number;
  /** What a `!` around the test charges, when there is one. */
  readonly negation?: number;
}

/** The standard library's prefix and suffix tests, by overload id, as the string methods they call. */
const AFFIX_TESTS: ReadonlyMap<string, "startsWith" | "endsWith"> = new Map([
  ["starts_with_string", "startsWith"],
  ["ends_with_string", "endsWith"],
]);

/** What `s.startsWith(text)` or `s.endsWith(text)` charges: the text's traversal, plus computing it. */
function affixUnits(text: string, textCost: number): number {
  return textCost + traversalUnits(text);
}

/** Whether a call runs the standard `!` of one bool, which `strictCall` compiles without a call. */
function isLogicalNot(o: OverloadDecl | undefined, decided: boolean, arity: number): boolean {
  return o !== undefined && decided && arity === 1 && o.id === "logical_not" && STANDARD_OVERLOADS.has(o);
}

/**
 * `quantifierLoop` with its predicate a `LoopTest`, done in the loop: the same steps and charges in
 * the same order (the loop's, the variable's, the test's, the negation's), the same results.
 */
function quantifiedTest(range: Operand, test: LoopTest, exists: boolean): Node {
  const stopOn = exists;
  const op = exists ? Op.logicalOr : Op.logicalAnd;
  const { method, text, units, negation } = test;
  const starts = method === "startsWith";
  // What a step charges after the loop's check: the loop variable, its read, the test and the `!`.
  const tail = 2 * COST.selectAndIdent + units + (negation ?? 0);
  const whole = Number.isInteger(tail);
  return (f) => {
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
}

/** Where each operand of a flattened logical chain sat in the tree: an operand's index, or a pair. */
type Shape = number | readonly [Shape, Shape];

/**
 * `&&` (`stopOn` false) or `||` (`stopOn` true) over a chain of operands, as the nested binary form
 * evaluates it. Operands run left to right until one gives `stopOn`, which decides the whole tree
 * whatever its shape (so the same operands run and the same units are charged). When none does, and
 * every operand gave the other bool, so does the tree; otherwise the values are folded over the
 * tree's shape, pair by pair, as the binary form would have combined them.
 */
function logical(operands: readonly Operand[], shape: Shape, stopOn: boolean): Node {
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

function conditional(test: Node, then: Node, otherwise: Node): Node {
  return (f) => {
    const c = test(f);
    if (c === true) return then(f);
    if (c === false) return otherwise(f);
    return isError(c) ? c : noSuchOverload(Op.conditional);
  };
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

/** A string constant of at most ten UTF-16 units has at most ten code points: equality costs 1 or 0. */
const SHORT_CONSTANT = 10;

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
  if (
    ta.kind === "string" &&
    b.kind === "constant" &&
    typeof b.value === "string" &&
    b.value.length <= SHORT_CONSTANT
  ) {
    // `event.type == "closed"`: a short constant costs 1 against a non-empty string, 0 when either is
    // empty, plus what computing the constant charged (nothing, for a literal).
    const lit = b.value;
    const empty = lit.length === 0;
    const own = b.cost;
    return (f) => {
      const x = operand(f, a);
      if (isError(x)) return x;
      charge(f, own + (empty || (x as string).length === 0 ? 0 : COST.call));
      return negate ? x !== lit : x === lit;
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

/**
 * How to build a map literal's values as an array: the values known at compile time and free to
 * compute are in place from the start (`template`); only the others (`steps`, at `computed`) run.
 */
interface RecordPlan {
  readonly template: readonly Value[];
  readonly computed: readonly number[];
  readonly steps: readonly Operand[];
}

function recordPlan(values: readonly Operand[]): RecordPlan {
  const template: Value[] = [];
  const computed: number[] = [];
  const steps: Operand[] = [];
  values.forEach((v, i) => {
    const free = v.kind === "constant" && v.cost === 0;
    template.push(free ? v.value : null);
    if (!free) {
      computed.push(i);
      steps.push(v);
    }
  });
  return { template, computed, steps };
}

/** A record's values, charged as the map literal is: its creation, then each value. */
function buildRecord(f: Frame, plan: RecordPlan): Result {
  charge(f, COST.mapCreateBase);
  const out = plan.template.slice();
  const { computed, steps } = plan;
  for (let j = 0; j < computed.length; j++) {
    const v = operand(f, steps[j] as Operand);
    if (isError(v)) return v;
    out[computed[j] as number] = v;
  }
  return out;
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

function notAnObject(o: unknown, name: string): CelError {
  return new CelError(`host value of type ${typeof o} is not an object (variable ${name})`);
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
